package ops_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
	"github.com/vit-train/vit-train/nn/runner"
)

func linearGELUFunc(v blas.Variant, bias bool) opstest.Func {
	return func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		var b *gorgonia.Node
		if bias {
			b = in[2]
		}
		return ops.LinearGELUAs(v, in[0], in[1], b)
	}
}

// linearThenGELU is LinearAs and GELU as two ops.
func linearThenGELU(v blas.Variant, bias bool) opstest.Func {
	return func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		var b *gorgonia.Node
		if bias {
			b = in[2]
		}
		h, err := ops.LinearAs(v, in[0], in[1], b)
		if err != nil {
			return nil, err
		}
		return ops.GELU(h)
	}
}

func TestLinearGELUGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, bias := range []bool{true, false} {
		inputs := []*tensor.Dense{opstest.Rand(rng, -1, 1, 2, 3, 5), opstest.Rand(rng, -1, 1, 7, 5), opstest.Rand(rng, -1, 1, 7)}
		wrt := []int{0, 1, 2}
		if !bias {
			inputs, wrt = inputs[:2], wrt[:2]
		}
		opstest.GradCheck(t, linearGELUFunc(blas.FP32, bias), inputs, wrt, opstest.Options{})
		opstest.AgreeF32(t, linearGELUFunc(blas.FP32, bias), inputs, wrt, 2e-6)
	}
}

// TestLinearGELUIsLinearThenGELU checks LinearGELUAs against LinearAs and
// GELU as separate ops, values and every gradient bit for bit, in float32
// and each low-precision variant this CPU runs, on products long and wide
// enough to take several K blocks, row strips and workers.
func TestLinearGELUIsLinearThenGELU(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	eachVariant(t, func(v blas.Variant) {
		for _, sh := range fusedShapes {
			inputs := []*tensor.Dense{opstest.Rand(rng, -2, 2, 2, sh.m, sh.k), opstest.Rand(rng, -0.1, 0.1, sh.n, sh.k), opstest.Rand(rng, -1, 1, sh.n)}
			sameBits(t, fmt.Sprintf("%s %v", v, sh), linearGELUFunc(v, true), linearThenGELU(v, true), inputs, []int{0, 1, 2}, []string{"dx", "dw", "db"})
		}
	})
}

// TestLinearGELUFrozenWeight checks that a frozen LinearGELU (an
// evaluation graph's) gives the unfrozen op's values bit for bit, in
// float32 and each low-precision variant this CPU runs.
func TestLinearGELUFrozenWeight(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	frozenSameBits(t, func(v blas.Variant, in []*gorgonia.Node) (*gorgonia.Node, error) {
		return ops.LinearGELUAs(v, in[0], in[1], in[2])
	}, opstest.Rand(rng, -2, 2, 3, 50, 96), opstest.Rand(rng, -0.1, 0.1, 130, 96), opstest.Rand(rng, -1, 1, 130))
}

// mlp is an MLP of two layers on (x, w1, b1, w2, b2): fc2(act(fc1(x))),
// with fc1 and GELU as LinearGELUAs when fused, else as LinearAs and GELU.
func mlp(v blas.Variant, fused bool) opstest.Func {
	return func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		first := linearThenGELU(v, true)
		if fused {
			first = linearGELUFunc(v, true)
		}
		h, err := first(g, in[:3])
		if err != nil {
			return nil, err
		}
		return ops.LinearAs(v, h, in[3], in[4])
	}
}

// mlpInputs returns (x, w1, b1, w2, b2) for an MLP of m rows (in 2
// samples), k inputs, n hidden units and k outputs.
func mlpInputs(rng *rand.Rand, m, n, k int) []*tensor.Dense {
	return []*tensor.Dense{opstest.Rand(rng, -2, 2, 2, m, k), opstest.Rand(rng, -0.1, 0.1, n, k), opstest.Rand(rng, -1, 1, n), opstest.Rand(rng, -0.1, 0.1, k, n), opstest.Rand(rng, -1, 1, k)}
}

func TestLinearGELUMLPGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	inputs := mlpInputs(rng, 3, 7, 5)
	wrt := []int{0, 1, 2, 3, 4}
	opstest.GradCheck(t, mlp(blas.FP32, true), inputs, wrt, opstest.Options{})
	opstest.AgreeF32(t, mlp(blas.FP32, true), inputs, wrt, 2e-6)
}

// TestLinearGELUMLPIsUnfused checks an MLP whose fc1 is LinearGELUAs,
// whose GELU gradient is then scaled into fc2's input gradient as the
// matrix kernel stores it, against the same MLP with LinearAs and GELU
// as separate ops: values and every gradient bit for bit, in float32 and
// each low-precision variant this CPU runs; and that the fused gradient
// is the one that ran.
func TestLinearGELUMLPIsUnfused(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	eachVariant(t, func(v blas.Variant) {
		for _, sh := range []struct{ m, n, k int }{{3, 5, 4}, {70, 129, 96}, {200, 1600, 384}} {
			sameBits(t, fmt.Sprintf("%s %v", v, sh), mlp(v, true), mlp(v, false), mlpInputs(rng, sh.m, sh.n, sh.k), []int{0, 1, 2, 3, 4}, []string{"dx", "dw1", "db1", "dw2", "db2"})
		}
	})
	if ran := gradientOps(t, mlp(blas.FP32, true), mlpInputs(rng, 3, 5, 4)); !slices.Contains(ran, "LinearGradInputGELU") || slices.Contains(ran, "GELUGrad") {
		t.Errorf("the fused MLP's gradient ran %v, not LinearGradInputGELU in place of GELU's gradient", ran)
	}
}

// gradientOps returns the ops of the nodes that f's gradient with respect
// to every input needs.
func gradientOps(t *testing.T, f opstest.Func, inputs []*tensor.Dense) []string {
	t.Helper()
	g := gorgonia.NewGraph()
	var in []*gorgonia.Node
	for i, v := range inputs {
		in = append(in, gorgonia.NodeFromAny(g, opstest.Convert(v, tensor.Float32), gorgonia.WithName(fmt.Sprint("input", i))))
	}
	out, err := f(g, in)
	if err != nil {
		t.Fatal(err)
	}
	cost, err := gorgonia.Sum(out)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := gorgonia.Grad(cost, in...)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	seen := map[*gorgonia.Node]bool{}
	var visit func(n *gorgonia.Node)
	visit = func(n *gorgonia.Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		if n.Op() != nil {
			ops = append(ops, n.Op().String())
		}
		for _, c := range runner.Inputs(g, n) {
			visit(c)
		}
	}
	for _, gn := range grads {
		visit(gn)
	}
	return ops
}
