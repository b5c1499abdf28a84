package ops_test

import (
	"math"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
)

// fusedShapes are the (m, n, k) of the products the fused ops' bit-for-bit
// tests run: tiny, and long and wide enough to take several K blocks, row
// strips and workers.
var fusedShapes = []struct{ m, n, k int }{{3, 5, 4}, {70, 129, 96}, {200, 384, 1600}}

// eachVariant runs f for float32 and each low-precision variant this CPU
// runs, logging the others.
func eachVariant(t *testing.T, f func(v blas.Variant)) {
	t.Helper()
	for _, v := range blas.Variants() {
		if !v.Runs() {
			t.Logf("the %s product does not run here", v)
			continue
		}
		f(v)
	}
}

// sameBits checks fused, an op standing for the separate ops of unfused,
// against them on inputs, in float32 and float64: the output and each
// gradient with respect to wrt (named by names) bit for bit.
func sameBits(t *testing.T, label string, fused, unfused opstest.Func, inputs []*tensor.Dense, wrt []int, names []string) {
	t.Helper()
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		want, err := opstest.Eval(unfused, inputs, wrt, dt, 1)
		if err != nil {
			t.Fatal(err)
		}
		got, err := opstest.Eval(fused, inputs, wrt, dt, 1)
		if err != nil {
			t.Fatal(err)
		}
		same := func(what string, got, want []float64) {
			t.Helper()
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%s %s: %s[%d] = %v, unfused %v", label, dt, what, i, got[i], want[i])
				}
			}
		}
		same("y", got.Out, want.Out)
		for i, name := range names {
			same(name, got.Grads[i], want.Grads[i])
		}
	}
}

// frozenSameBits checks that build's op, a WeightFreezer built on args in
// each variant this CPU runs, gives the same values bit for bit frozen
// (as an evaluation graph's) as unfrozen.
func frozenSameBits(t *testing.T, build func(v blas.Variant, args []*gorgonia.Node) (*gorgonia.Node, error), args ...*tensor.Dense) {
	t.Helper()
	values := make([]gorgonia.Value, len(args))
	for i, a := range args {
		values[i] = opstest.Convert(a, tensor.Float32)
	}
	eachVariant(t, func(v blas.Variant) {
		g := gorgonia.NewGraph()
		nodes := make([]*gorgonia.Node, len(values))
		for i, a := range values {
			nodes[i] = gorgonia.NodeFromAny(g, a)
		}
		node, err := build(v, nodes)
		if err != nil {
			t.Fatal(err)
		}
		op := node.Op().(ops.WeightFreezer)
		run := func() []float64 {
			t.Helper()
			y, err := op.Do(values...)
			if err != nil {
				t.Fatal(err)
			}
			return floats64(y.(*tensor.Dense))
		}
		plain := run()
		op.FreezeWeight(true)
		for i, got := range run() {
			if math.Float64bits(got) != math.Float64bits(plain[i]) {
				t.Fatalf("%s: frozen y[%d] = %v, unfrozen %v", v, i, got, plain[i])
			}
		}
	})
}
