package ops_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
	"github.com/vit-train/vit-train/nn/runner"
)

func geluFunc(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
	return ops.GELU(in[0])
}

func TestGELUGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, shape := range [][]int{{11}, {3, 5}, {2, 3, 4}} {
		inputs := []*tensor.Dense{opstest.Rand(rng, -4, 4, shape...)}
		opstest.GradCheck(t, geluFunc, inputs, []int{0}, opstest.Options{})
		opstest.AgreeF32(t, geluFunc, inputs, []int{0}, 2e-6)
	}
}

// TestGELUBackwardLeavesInput checks that GELU's backward does not read
// the forward's input x: a training step can then free x, the (B, N, 4D)
// output of a ViT's fc1, as soon as the forward has read it.
func TestGELUBackwardLeavesInput(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(3, 4), gorgonia.WithName("x"))
	y, err := ops.GELU(x)
	if err != nil {
		t.Fatal(err)
	}
	cost, err := gorgonia.Sum(y)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := gorgonia.Grad(cost, x)
	if err != nil {
		t.Fatal(err)
	}
	back := grads[0]
	if back.Op().String() != "GELUGrad" {
		t.Fatalf("x's gradient is %v, want GELUGrad", back.Op())
	}
	in := runner.Inputs(g, back)
	if len(in) != 2 || in[0] != y {
		t.Fatalf("GELUGrad reads %v, want (y, dy)", in)
	}
	for _, n := range in {
		if n == x {
			t.Fatal("GELUGrad reads x")
		}
	}
}

func TestGELUValues(t *testing.T) {
	// x·Φ(x) with Φ from tables: Φ(1) = 0.8413447460685429,
	// Φ(2) = 0.9772498680518208, Φ(−3) = 0.0013498980316300957.
	x := []float64{0, 1, -1, 2, -3, 10, -10}
	want := []float64{0, 0.8413447460685429, -0.15865525393145707, 1.9544997361036416, -0.004049694094890287, 10, -7.619853024160593e-23}
	dy := []float64{1, 1, 1, 1, 1, 1, 1}
	// GELU'(x) = Φ(x) + x·φ(x), φ(1) = 0.24197072451914337.
	wantGrad := []float64{0.5, 0.8413447460685429 + 0.24197072451914337, 0.15865525393145707 - 0.24197072451914337}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		tol := 1e-15
		if dt == tensor.Float32 {
			tol = 1e-6
		}
		got, grads := fusedEval(t, geluFunc, []*tensor.Dense{dense(x, 7)}, dense(dy, 7), []int{0}, dt)
		assertClose(t, dt.String()+" GELU", got, want, tol)
		assertClose(t, dt.String()+" GELU'", grads[0][:3], wantGrad, tol)
	}
}

// TestGELUFloat32MatchesMath compares the float32 kernels with x·Φ(x) and
// Φ(x) + x·φ(x) from math.Erfc over a dense grid, tails included.
func TestGELUFloat32MatchesMath(t *testing.T) {
	const n = 40001
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(float32(-12 + 24*float64(i)/(n-1)))
	}
	got, grads := fusedEval(t, geluFunc, []*tensor.Dense{dense(x, n)}, filled(1, n), []int{0}, tensor.Float32)
	worstY, worstD := 0.0, 0.0
	for i, v := range x {
		cdf := 0.5 * math.Erfc(-v/math.Sqrt2)
		pdf := math.Exp(-v*v/2) / math.Sqrt(2*math.Pi)
		worstY = math.Max(worstY, math.Abs(got[i]-v*cdf)/math.Max(1, math.Abs(v)))
		worstD = math.Max(worstD, math.Abs(grads[0][i]-(cdf+v*pdf))/math.Max(1, math.Abs(v)))
	}
	t.Logf("worst error / max(1, |x|): GELU %.3g, GELU' %.3g", worstY, worstD)
	if worstY > 1e-6 || worstD > 1e-6 {
		t.Fatalf("float32 GELU error %.3g, GELU' error %.3g: want ≤ 1e-6", worstY, worstD)
	}
}

// BenchmarkGELU is forward and backward of GELU over a ViT-B MLP hidden
// layer's input (64·65 tokens × 768) in float32.
func BenchmarkGELU(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	benchFused(b, geluFunc, []*tensor.Dense{opstest.Rand(rng, -4, 4, 64*65, 768)}, []int{0})
}

// BenchmarkGELUForward is the forward pass alone.
func BenchmarkGELUForward(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	benchFused(b, geluFunc, []*tensor.Dense{opstest.Rand(rng, -4, 4, 64*65, 768)}, nil)
}
