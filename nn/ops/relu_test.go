package ops_test

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
)

func reluFunc(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
	return ops.ReLU(in[0])
}

func TestReLU(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	// Values at least 0.01 from the kink keep the central differences exact.
	x := opstest.Rand(rng, 0.01, 1, 2, 3, 4)
	for i, v := range x.Data().([]float64) {
		if i%2 == 0 {
			x.Data().([]float64)[i] = -v
		}
	}
	opstest.GradCheck(t, reluFunc, []*tensor.Dense{x}, []int{0}, opstest.Options{})
	opstest.AgreeF32(t, reluFunc, []*tensor.Dense{x}, []int{0}, 1e-6)

	h := tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{-2, 0, 0.5, 3}))
	r, err := opstest.Eval(reluFunc, []*tensor.Dense{h}, []int{0}, tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{0, 0, 0.5, 3}; !equalF64(r.Out, want) {
		t.Fatalf("got %v, want %v", r.Out, want)
	}
	if r.Grads[0][0] != 0 || r.Grads[0][1] != 0 || r.Grads[0][2] == 0 || r.Grads[0][3] == 0 {
		t.Fatalf("gradient %v should vanish exactly where x ≤ 0", r.Grads[0])
	}
}
