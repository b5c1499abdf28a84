package ops_test

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
)

func TestLinearGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		x, w []int
		bias bool
	}{
		{"matrix", []int{5, 4}, []int{3, 4}, true},
		{"tokens", []int{2, 3, 4}, []int{6, 4}, true},
		{"no bias", []int{2, 3, 4}, []int{6, 4}, false},
		{"conv weight", []int{2, 4, 12}, []int{5, 3, 2, 2}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inputs := []*tensor.Dense{opstest.Rand(rng, -1, 1, tc.x...), opstest.Rand(rng, -1, 1, tc.w...)}
			wrt := []int{0, 1}
			if tc.bias {
				inputs = append(inputs, opstest.Rand(rng, -1, 1, tc.w[0]))
				wrt = append(wrt, 2)
			}
			f := func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
				var b *gorgonia.Node
				if tc.bias {
					b = in[2]
				}
				return ops.Linear(in[0], in[1], b)
			}
			opstest.GradCheck(t, f, inputs, wrt, opstest.Options{})
			opstest.AgreeF32(t, f, inputs, wrt, 1e-5)
		})
	}
}

func TestLinearForwardValues(t *testing.T) {
	// y = x·Wᵀ + b worked by hand.
	x := tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float64{1, 2}))
	w := tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{3, 4, 5, 6}))
	b := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{0.5, -1}))
	r, err := opstest.Eval(func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		return ops.Linear(in[0], in[1], in[2])
	}, []*tensor.Dense{x, w, b}, nil, tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{11.5, 16}; r.Out[0] != want[0] || r.Out[1] != want[1] {
		t.Fatalf("got %v, want %v", r.Out, want)
	}
}

func TestLinearRejectsMismatchedShapes(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("x"))
	w := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(4, 5), gorgonia.WithName("w"))
	if _, err := ops.Linear(x, w, nil); err == nil {
		t.Fatal("expected an error for 3 features against a weight taking 5")
	}
}
