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

// distillationFunc is DeiT's soft distillation objective on inputs
// (logits, targets, teacher): the logits feed two losses, so their gradient
// is the sum of two backward branches.
func distillationFunc(weights []float64) opstest.Func {
	return func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		ce, err := ops.SoftTargetCrossEntropy(in[0], in[1])
		if err != nil {
			return nil, err
		}
		kd, err := ops.DistillKL(in[0], in[2], 2, false)
		if err != nil {
			return nil, err
		}
		return ops.Combine(weights, ce, kd)
	}
}

func TestCombineGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	inputs := []*tensor.Dense{opstest.Rand(rng, -2, 2, 3, 4), randomTargets(rng, 3, 4), opstest.Rand(rng, -2, 2, 3, 4)}
	for _, w := range [][]float64{{0.5, 0.5}, {1, 2.5}, {1, 1}, {-0.25, 0}} {
		f := distillationFunc(w)
		opstest.GradCheck(t, f, inputs, []int{0}, opstest.Options{})
		opstest.AgreeF32(t, f, inputs, []int{0}, 2e-6)
	}
}

func TestCombineValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	inputs := []*tensor.Dense{opstest.Rand(rng, -2, 2, 3, 4), randomTargets(rng, 3, 4), opstest.Rand(rng, -2, 2, 3, 4)}
	ce, ceGrad := fusedEval(t, softTargetFunc, inputs[:2], nil, []int{0}, tensor.Float64)
	kd, kdGrad := fusedEval(t, distillKLFunc(2, false), []*tensor.Dense{inputs[0], inputs[2]}, nil, []int{0}, tensor.Float64)
	got, grads := fusedEval(t, distillationFunc([]float64{0.7, 0.3}), inputs, nil, []int{0}, tensor.Float64)
	assertClose(t, "0.7·CE + 0.3·KD", got, []float64{0.7*ce[0] + 0.3*kd[0]}, 1e-15)
	want := make([]float64, len(ceGrad[0]))
	for i := range want {
		want[i] = 0.7*ceGrad[0][i] + 0.3*kdGrad[0][i]
	}
	assertClose(t, "gradient", grads[0], want, 1e-15)
}

func TestCombineRejectsBadInputs(t *testing.T) {
	g := gorgonia.NewGraph()
	a := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("a"))
	f32 := gorgonia.NewScalar(g, tensor.Float32, gorgonia.WithName("f32"))
	v := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("v"))
	for _, tc := range []struct {
		name    string
		weights []float64
		terms   []*gorgonia.Node
	}{
		{"no terms", nil, nil},
		{"fewer weights", []float64{1}, []*gorgonia.Node{a, a}},
		{"tensor term", []float64{1}, []*gorgonia.Node{v}},
		{"mixed dtypes", []float64{1, 1}, []*gorgonia.Node{a, f32}},
		{"NaN weight", []float64{math.NaN()}, []*gorgonia.Node{a}},
	} {
		if _, err := ops.Combine(tc.weights, tc.terms...); err == nil {
			t.Errorf("%s: expected an error", tc.name)
		}
	}
}

func TestAddGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, tc := range []struct {
		name   string
		inputs []*tensor.Dense
		wrt    []int
		f      opstest.Func
	}{
		{"a + b", []*tensor.Dense{opstest.Rand(rng, -1, 1, 2, 3, 4), opstest.Rand(rng, -1, 1, 2, 3, 4)}, []int{0, 1},
			func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) { return ops.Add(in[0], in[1]) }},
		{"x + x", []*tensor.Dense{opstest.Rand(rng, -1, 1, 3, 5)}, []int{0},
			func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) { return ops.Add(in[0], in[0]) }},
		{"residual x + GELU(LayerNorm(x))", []*tensor.Dense{opstest.Rand(rng, -2, 2, 2, 3, 6), opstest.Rand(rng, 0.5, 1.5, 6), opstest.Rand(rng, -1, 1, 6)}, []int{0, 1, 2},
			func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
				h, err := ops.LayerNorm(in[0], in[1], in[2], 1e-6)
				if err != nil {
					return nil, err
				}
				if h, err = ops.GELU(h); err != nil {
					return nil, err
				}
				return ops.Add(in[0], h)
			}},
		{"two residuals sharing a branch", []*tensor.Dense{opstest.Rand(rng, -2, 2, 4, 5)}, []int{0},
			func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
				s, err := ops.Softmax(in[0])
				if err != nil {
					return nil, err
				}
				a, err := ops.Add(in[0], s)
				if err != nil {
					return nil, err
				}
				return ops.Add(a, s)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opstest.GradCheck(t, tc.f, tc.inputs, tc.wrt, opstest.Options{})
			opstest.AgreeF32(t, tc.f, tc.inputs, tc.wrt, 2e-6)
		})
	}
}

func TestAddValues(t *testing.T) {
	add := func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) { return ops.Add(in[0], in[1]) }
	a, b := []float64{1, 2, 3, 4}, []float64{0.5, -2, 10, 0}
	dy := []float64{1, -1, 2, 0.5}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		got, grads := fusedEval(t, add, []*tensor.Dense{dense(a, 2, 2), dense(b, 2, 2)}, dense(dy, 2, 2), []int{0, 1}, dt)
		assertClose(t, "a + b", got, []float64{1.5, 0, 13, 4}, 0)
		assertClose(t, "da", grads[0], dy, 0)
		assertClose(t, "db", grads[1], dy, 0)
	}
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("x"))
	y := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(3, 2), gorgonia.WithName("y"))
	if _, err := ops.Add(x, y); err == nil {
		t.Error("Add of (2, 3) and (3, 2): expected an error")
	}
}
