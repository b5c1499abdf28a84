package ops_test

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
)

func TestEmbedTokensValues(t *testing.T) {
	// B=1, Np=1, D=2, prefix = cls.
	patches := tensor.New(tensor.WithShape(1, 1, 2), tensor.WithBacking([]float64{1, 2}))
	pos := tensor.New(tensor.WithShape(1, 2, 2), tensor.WithBacking([]float64{10, 20, 30, 40}))
	cls := tensor.New(tensor.WithShape(1, 1, 2), tensor.WithBacking([]float64{-1, -2}))
	r, err := opstest.Eval(func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		return ops.EmbedTokens(in[0], in[1], in[2])
	}, []*tensor.Dense{patches, pos, cls}, nil, tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{9, 18, 31, 42}
	for i := range want {
		if r.Out[i] != want[i] {
			t.Fatalf("got %v, want %v", r.Out, want)
		}
	}
}

func TestEmbedTokensGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, prefix := range []int{1, 2} {
		const b, np, d = 3, 4, 5
		in := []*tensor.Dense{opstest.Rand(rng, -1, 1, b, np, d), opstest.Rand(rng, -1, 1, 1, np+prefix, d)}
		wrt := []int{0, 1}
		for i := 0; i < prefix; i++ {
			in = append(in, opstest.Rand(rng, -1, 1, 1, 1, d))
			wrt = append(wrt, 2+i)
		}
		f := func(g *gorgonia.ExprGraph, n []*gorgonia.Node) (*gorgonia.Node, error) {
			return ops.EmbedTokens(n[0], n[1], n[2:]...)
		}
		opstest.GradCheck(t, f, in, wrt, opstest.Options{})
		opstest.AgreeF32(t, f, in, wrt, 1e-6)
	}
}

func TestSelectTokenGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tok := range []int{0, 1} {
		f := func(g *gorgonia.ExprGraph, n []*gorgonia.Node) (*gorgonia.Node, error) {
			return ops.SelectToken(n[0], tok)
		}
		x := opstest.Rand(rng, -1, 1, 2, 3, 4)
		opstest.GradCheck(t, f, []*tensor.Dense{x}, []int{0}, opstest.Options{})
		r, err := opstest.Eval(f, []*tensor.Dense{x}, nil, tensor.Float64, 1)
		if err != nil {
			t.Fatal(err)
		}
		xs := x.Data().([]float64)
		for bi := 0; bi < 2; bi++ {
			for j := 0; j < 4; j++ {
				if got, want := r.Out[bi*4+j], xs[(bi*3+tok)*4+j]; got != want {
					t.Fatalf("token %d, sample %d, feature %d: got %v want %v", tok, bi, j, got, want)
				}
			}
		}
	}
}

func TestTokensGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const b, n, d = 2, 5, 3
	for _, r := range [][2]int{{0, 1}, {0, 2}, {1, 4}, {0, n}} {
		f := func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
			return ops.Tokens(in[0], r[0], r[1])
		}
		x := opstest.Rand(rng, -1, 1, b, n, d)
		opstest.GradCheck(t, f, []*tensor.Dense{x}, []int{0}, opstest.Options{})
		got, err := opstest.Eval(f, []*tensor.Dense{x}, nil, tensor.Float64, 1)
		if err != nil {
			t.Fatal(err)
		}
		xs, w := x.Data().([]float64), r[1]-r[0]
		for bi := range b {
			for i := range w * d {
				if g, want := got.Out[bi*w*d+i], xs[(bi*n+r[0])*d+i]; g != want {
					t.Fatalf("tokens %v, sample %d, value %d: got %v want %v", r, bi, i, g, want)
				}
			}
		}
	}
	x := opstest.Rand(rng, -1, 1, b, n, d)
	for _, r := range [][2]int{{0, 0}, {-1, 2}, {2, n + 1}, {3, 2}} {
		_, err := opstest.Eval(func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
			return ops.Tokens(in[0], r[0], r[1])
		}, []*tensor.Dense{x}, nil, tensor.Float64, 1)
		if err == nil {
			t.Errorf("tokens %v of %d: no error", r, n)
		}
	}
}
