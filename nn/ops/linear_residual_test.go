package ops_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
)

// linearResidualFunc is LinearResidualAs on (x, w, b, r), or (x, w, r)
// without a bias.
func linearResidualFunc(v blas.Variant, bias bool) opstest.Func {
	return func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		if bias {
			return ops.LinearResidualAs(v, in[0], in[1], in[2], in[3])
		}
		return ops.LinearResidualAs(v, in[0], in[1], nil, in[2])
	}
}

// linearThenAdd is LinearAs and Add(r, ·) as two ops.
func linearThenAdd(v blas.Variant) opstest.Func {
	return func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		h, err := ops.LinearAs(v, in[0], in[1], in[2])
		if err != nil {
			return nil, err
		}
		return ops.Add(in[3], h)
	}
}

func TestLinearResidualGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, bias := range []bool{true, false} {
		inputs := []*tensor.Dense{opstest.Rand(rng, -1, 1, 2, 3, 5), opstest.Rand(rng, -1, 1, 7, 5), opstest.Rand(rng, -1, 1, 7), opstest.Rand(rng, -1, 1, 2, 3, 7)}
		wrt := []int{0, 1, 2, 3}
		if !bias {
			inputs, wrt = []*tensor.Dense{inputs[0], inputs[1], inputs[3]}, wrt[:3]
		}
		opstest.GradCheck(t, linearResidualFunc(blas.FP32, bias), inputs, wrt, opstest.Options{})
		opstest.AgreeF32(t, linearResidualFunc(blas.FP32, bias), inputs, wrt, 2e-6)
	}
}

// TestLinearResidualIsLinearThenAdd checks LinearResidualAs against
// LinearAs and Add as separate ops, values and every gradient bit for
// bit, in float32 and each low-precision variant this CPU runs, on
// products long and wide enough to take several K blocks, row strips and
// workers.
func TestLinearResidualIsLinearThenAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	eachVariant(t, func(v blas.Variant) {
		for _, sh := range fusedShapes {
			inputs := []*tensor.Dense{opstest.Rand(rng, -2, 2, 2, sh.m, sh.k), opstest.Rand(rng, -0.1, 0.1, sh.n, sh.k), opstest.Rand(rng, -1, 1, sh.n), opstest.Rand(rng, -3, 3, 2, sh.m, sh.n)}
			sameBits(t, fmt.Sprintf("%s %v", v, sh), linearResidualFunc(v, true), linearThenAdd(v), inputs, []int{0, 1, 2, 3}, []string{"dx", "dw", "db", "dr"})
		}
	})
}

// TestLinearResidualFrozenWeight checks that a frozen LinearResidual (an
// evaluation graph's) gives the unfrozen op's values bit for bit, in
// float32 and each low-precision variant this CPU runs.
func TestLinearResidualFrozenWeight(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	frozenSameBits(t, func(v blas.Variant, in []*gorgonia.Node) (*gorgonia.Node, error) {
		return ops.LinearResidualAs(v, in[0], in[1], in[2], in[3])
	}, opstest.Rand(rng, -2, 2, 3, 50, 96), opstest.Rand(rng, -0.1, 0.1, 130, 96), opstest.Rand(rng, -1, 1, 130), opstest.Rand(rng, -1, 1, 3, 50, 130))
}

// TestLinearResidualShapes checks that a residual of another shape is
// refused, naming both shapes.
func TestLinearResidualShapes(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewTensor(g, tensor.Float32, 3, gorgonia.WithShape(2, 3, 5), gorgonia.WithName("x"))
	w := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(7, 5), gorgonia.WithName("w"))
	r := gorgonia.NewTensor(g, tensor.Float32, 3, gorgonia.WithShape(2, 3, 5), gorgonia.WithName("r"))
	_, err := ops.LinearResidualAs(blas.FP32, x, w, nil, r)
	if err == nil || !strings.Contains(err.Error(), "(2, 3, 5)") || !strings.Contains(err.Error(), "(2, 3, 7)") {
		t.Fatalf("residual (2, 3, 5) for a product (2, 3, 7): error %v", err)
	}
}
