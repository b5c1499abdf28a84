package ops_test

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
)

func TestPatchifyLayout(t *testing.T) {
	// One 2-channel 4×4 image whose pixel value encodes (c, y, x).
	const c, h, w, p = 2, 4, 4, 2
	img := make([]float64, c*h*w)
	for ci := 0; ci < c; ci++ {
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				img[(ci*h+y)*w+x] = float64(100*ci + 10*y + x)
			}
		}
	}
	r, err := opstest.Eval(func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		return ops.Patchify(in[0], p)
	}, []*tensor.Dense{tensor.New(tensor.WithShape(1, c, h, w), tensor.WithBacking(img))}, nil, tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Patch 1 is grid (0, 1): pixels x in {2, 3}, y in {0, 1}; features (c, py, px).
	want := []float64{2, 3, 12, 13, 102, 103, 112, 113}
	got := r.Out[8:16]
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("patch 1 = %v, want %v", got, want)
		}
	}
	if len(r.Out) != 4*8 {
		t.Fatalf("got %d values, want 32", len(r.Out))
	}
}

func TestPatchifyGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	f := func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		return ops.Patchify(in[0], 2)
	}
	in := []*tensor.Dense{opstest.Rand(rng, -1, 1, 2, 3, 4, 6)}
	opstest.GradCheck(t, f, in, []int{0}, opstest.Options{})
	opstest.AgreeF32(t, f, in, []int{0}, 1e-6)
}

func TestPatchifyRejectsIndivisibleImage(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(1, 3, 30, 32), gorgonia.WithName("x"))
	if _, err := ops.Patchify(x, 4); err == nil {
		t.Fatal("expected an error: 4 does not divide 30")
	}
}
