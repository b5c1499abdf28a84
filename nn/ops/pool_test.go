package ops_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
)

func globalAvgPoolFunc(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
	return ops.GlobalAvgPool(in[0])
}

func TestGlobalAvgPool(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	inputs := []*tensor.Dense{opstest.Rand(rng, -1, 1, 3, 4, 3, 2)}
	opstest.GradCheck(t, globalAvgPoolFunc, inputs, []int{0}, opstest.Options{})
	opstest.AgreeF32(t, globalAvgPoolFunc, inputs, []int{0}, 1e-6)

	// Two planes of four: means 2.5 and −1.
	x := tensor.New(tensor.WithShape(1, 2, 2, 2), tensor.WithBacking([]float64{1, 2, 3, 4, -1, -2, 0, -1}))
	r, err := opstest.Eval(globalAvgPoolFunc, []*tensor.Dense{x}, nil, tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Out[0] != 2.5 || r.Out[1] != -1 {
		t.Fatalf("got %v, want [2.5 -1]", r.Out)
	}
}

func maxPoolFunc(k, stride, pad int) opstest.Func {
	return func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		return ops.MaxPool2d(in[0], k, stride, pad)
	}
}

func TestMaxPoolGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct {
		name           string
		x              []int
		k, stride, pad int
	}{
		{"resnet stem", []int{2, 3, 7, 6}, 3, 2, 1},
		{"2x2", []int{2, 2, 4, 4}, 2, 2, 0},
		{"overlapping stride 1", []int{1, 2, 5, 5}, 3, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inputs := []*tensor.Dense{opstest.Rand(rng, -1, 1, tc.x...)}
			opstest.GradCheck(t, maxPoolFunc(tc.k, tc.stride, tc.pad), inputs, []int{0}, opstest.Options{})
			opstest.AgreeF32(t, maxPoolFunc(tc.k, tc.stride, tc.pad), inputs, []int{0}, 1e-6)
		})
	}
}

func TestMaxPoolHandValues(t *testing.T) {
	// A 4×4 plane; 3×3 windows, stride 2, padding 1 give a 2×2 output
	// over rows/columns {−1,0,1} and {1,2,3}. The 9 is the maximum of two
	// windows.
	x := tensor.New(tensor.WithShape(1, 1, 4, 4), tensor.WithBacking([]float64{
		1, 5, 2, 0,
		3, -1, 4, 9,
		0, 7, 6, 2,
		8, 1, 3, -2,
	}))
	r, err := opstest.Eval(maxPoolFunc(3, 2, 1), []*tensor.Dense{x}, []int{0}, tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{5, 9, 8, 9}; !equalF64(r.Out, want) {
		t.Fatalf("got %v, want %v", r.Out, want)
	}
	// The gradient lands on the three maxima only.
	for i, g := range r.Grads[0] {
		if isMax := i == 1 || i == 7 || i == 12; isMax != (g != 0) {
			t.Fatalf("gradient %v: element %d", r.Grads[0], i)
		}
	}
}

func TestMaxPoolPropagatesNaN(t *testing.T) {
	x := tensor.New(tensor.WithShape(1, 1, 2, 2), tensor.WithBacking([]float64{1, math.NaN(), 3, 2}))
	r, err := opstest.Eval(maxPoolFunc(2, 2, 0), []*tensor.Dense{x}, nil, tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(r.Out[0]) {
		t.Fatalf("got %v, want NaN", r.Out)
	}
}

func TestPoolRejectsBadShapes(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewTensor(g, tensor.Float64, 4, gorgonia.WithShape(1, 2, 4, 4), gorgonia.WithName("x"))
	v := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 4), gorgonia.WithName("v"))
	if _, err := ops.MaxPool2d(x, 3, 2, 2); err == nil {
		t.Error("MaxPool2d: expected an error for padding 2 on a 3×3 window")
	}
	if _, err := ops.MaxPool2d(x, 5, 1, 0); err == nil {
		t.Error("MaxPool2d: expected an error for a window larger than the input")
	}
	if _, err := ops.MaxPool2d(v, 2, 2, 0); err == nil {
		t.Error("MaxPool2d: expected an error for a 2-D input")
	}
	if _, err := ops.GlobalAvgPool(v); err == nil {
		t.Error("GlobalAvgPool: expected an error for a 2-D input")
	}
}

func equalF64(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
