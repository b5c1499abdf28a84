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

// TestLinearFrozenWeight checks a frozen Linear: bit for bit the plain
// op's result in float32 and float64, the packed copy kept while the
// weight tensor is the same (its values must not change meanwhile),
// packed anew for another tensor or after FreezeWeight(true) again, and
// dropped by FreezeWeight(false).
func TestLinearFrozenWeight(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			asDtype := func(d *tensor.Dense) *tensor.Dense {
				if dt == tensor.Float64 {
					return d
				}
				f := d.Float64s()
				s := make([]float32, len(f))
				for i, v := range f {
					s[i] = float32(v)
				}
				return tensor.New(tensor.WithShape(d.Shape().Clone()...), tensor.WithBacking(s))
			}
			x := asDtype(opstest.Rand(rng, -1, 1, 3, 50, 70))
			w := asDtype(opstest.Rand(rng, -1, 1, 90, 70))
			b := asDtype(opstest.Rand(rng, -1, 1, 90))
			g := gorgonia.NewGraph()
			node, err := ops.Linear(gorgonia.NodeFromAny(g, x), gorgonia.NodeFromAny(g, w), gorgonia.NodeFromAny(g, b))
			if err != nil {
				t.Fatal(err)
			}
			op := node.Op().(ops.WeightFreezer)
			if op.WeightArg() != 1 {
				t.Fatalf("WeightArg = %d, want 1", op.WeightArg())
			}
			run := func(w *tensor.Dense) []float64 {
				t.Helper()
				y, err := op.Do(x, w, b)
				if err != nil {
					t.Fatal(err)
				}
				return floats64(y.(*tensor.Dense))
			}
			same := func(what string, got, want []float64) {
				t.Helper()
				for i := range got {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("%s: y[%d] = %v, want %v", what, i, got[i], want[i])
					}
				}
			}
			plain := run(w)
			op.FreezeWeight(true)
			same("frozen", run(w), plain)
			// Changing the values in place is what freezing rules out: the
			// copy stays as packed until the op is frozen again.
			scale(w, -2)
			same("frozen, weight changed in place", run(w), plain)
			op.FreezeWeight(false)
			plain2 := run(w)
			if math.Float64bits(plain2[0]) == math.Float64bits(plain[0]) {
				t.Fatal("scaling the weight did not change the output")
			}
			op.FreezeWeight(true)
			same("frozen again", run(w), plain2)
			// Another weight tensor is packed anew.
			w3 := asDtype(opstest.Rand(rng, -1, 1, 90, 70))
			op.FreezeWeight(false)
			plain3 := run(w3)
			op.FreezeWeight(true)
			same("frozen, first tensor", run(w), plain2)
			same("frozen, another tensor", run(w3), plain3)
		})
	}
}

func floats64(d *tensor.Dense) []float64 {
	switch s := d.Data().(type) {
	case []float64:
		return s
	case []float32:
		f := make([]float64, len(s))
		for i, v := range s {
			f[i] = float64(v)
		}
		return f
	}
	return nil
}

func scale(d *tensor.Dense, by float64) {
	switch s := d.Data().(type) {
	case []float64:
		for i := range s {
			s[i] *= by
		}
	case []float32:
		for i := range s {
			s[i] *= float32(by)
		}
	}
}
