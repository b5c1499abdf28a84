package ops_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
)

// TestLinearKeepsWeightPacked checks a linear layer that keeps its weight
// packed (ops.WeightPacker) against one that packs it on every product,
// bit for bit, in the forward pass and the input gradient: with the
// copies repacked row piece by row piece after the weight changed, with
// only some rows repacked (the next forward pass packs the whole weight
// again) and with rows of another tensor offered (ignored); and that a
// float32 layer keeps nothing.
func TestLinearKeepsWeightPacked(t *testing.T) {
	v := blas.Mixed()
	if v.IsFP32() {
		t.Skip("no low-precision product faster than float32 on this processor")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const m, n, k = 150, 130, 96
	x, w, b := rand32(rng, -1, 1, m, k), rand32(rng, -1, 1, n, k), rand32(rng, -1, 1, n)
	dy := rand32(rng, -1, 1, m, n)
	kept, keptGrad := linearWithGrad(t, v, x, w, b)
	plain, plainGrad := linearWithGrad(t, v, x, w, b)
	if !kept.KeepWeightPacked() {
		t.Fatalf("a %s layer does not keep its weight packed", v)
	}
	if fp32, _ := linearWithGrad(t, blas.FP32, x, w, b); fp32.KeepWeightPacked() {
		t.Error("a float32 layer keeps its weight packed")
	}
	rowLen, align := kept.WeightRows()
	if rowLen != k || align < 1 {
		t.Fatalf("WeightRows = %d, %d; want rows of %d", rowLen, align, k)
	}
	check := func(what string) {
		t.Helper()
		for _, pass := range []struct {
			name      string
			got, want gorgonia.Op
			args      []gorgonia.Value
		}{{"y", kept, plain, []gorgonia.Value{x, w, b}}, {"dx", keptGrad, plainGrad, []gorgonia.Value{dy, w}}} {
			got, err := pass.got.Do(pass.args...)
			if err != nil {
				t.Fatal(err)
			}
			want, err := pass.want.Do(pass.args...)
			if err != nil {
				t.Fatal(err)
			}
			g, wv := got.Data().([]float32), want.Data().([]float32)
			for i := range g {
				if math.Float32bits(g[i]) != math.Float32bits(wv[i]) {
					t.Fatalf("%s: %s[%d] = %v, %v packed anew", what, pass.name, i, g[i], wv[i])
				}
			}
		}
	}
	values := w.Data().([]float32)
	change := func() {
		for i := range values {
			values[i] = float32(rng.NormFloat64())
		}
	}
	repack := func(src []float32, upTo int) {
		for r0 := 0; r0 < upTo; r0 += align {
			kept.RepackWeightRows(src, r0, min(r0+align, n))
		}
	}
	check("first pass")
	change()
	kept.StartRepack()
	repack(values, n)
	check("every row repacked")
	change()
	kept.StartRepack()
	repack(values, align)
	check("one piece of rows repacked")
	change()
	kept.StartRepack()
	other := make([]float32, len(values))
	repack(other, n)
	check("another tensor's rows offered")
}

// linearWithGrad returns the op of Linear in v over x, w, b and the op of
// its input gradient.
func linearWithGrad(t *testing.T, v blas.Variant, x, w, b *tensor.Dense) (ops.WeightPacker, gorgonia.Op) {
	t.Helper()
	g := gorgonia.NewGraph()
	xn, wn, bn := gorgonia.NodeFromAny(g, x), gorgonia.NodeFromAny(g, w), gorgonia.NodeFromAny(g, b)
	y, err := ops.LinearAs(v, xn, wn, bn)
	if err != nil {
		t.Fatal(err)
	}
	grad := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(y.Shape()...))
	diff, err := y.Op().(gorgonia.SDOp).SymDiff(gorgonia.Nodes{xn, wn, bn}, y, grad)
	if err != nil {
		t.Fatal(err)
	}
	return y.Op().(ops.WeightPacker), diff[0].Op()
}

// rand32 returns a float32 tensor of the given shape, entries uniform in
// [lo, hi).
func rand32(rng *rand.Rand, lo, hi float32, shape ...int) *tensor.Dense {
	d := make([]float32, tensor.Shape(shape).TotalSize())
	for i := range d {
		d[i] = lo + (hi-lo)*rng.Float32()
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
}
