package ops

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/vit-train/vit-train/nn/blas"
)

// TestConv2dGroupingIsExact checks that lowering several samples into one
// column matrix gives the per-sample results, for every kernel.
func TestConv2dGroupingIsExact(t *testing.T) {
	defer func(old int) { groupCols = old }(groupCols)
	// group leaves every worker a group, so these batches are grouped only
	// with few workers: two, whatever the machine's cores.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	rng := rand.New(rand.NewPCG(1, 2))
	randSlice := func(n int) []float64 {
		d := make([]float64, n)
		for i := range d {
			d[i] = rng.Float64()*2 - 1
		}
		return d
	}
	for _, tc := range []struct{ batch, c, h, w, o, k, stride, pad int }{
		{5, 3, 6, 5, 4, 3, 1, 1},
		{7, 2, 5, 5, 3, 1, 2, 0},
		{4, 4, 3, 3, 2, 1, 1, 0},
	} {
		g, err := newConvGeom(tc.c, tc.h, tc.w, tc.k, tc.k, tc.stride, tc.pad)
		if err != nil {
			t.Fatal(err)
		}
		x, w := randSlice(tc.batch*g.imageSize()), randSlice(tc.o*g.colRows())
		dy := randSlice(tc.batch * tc.o * g.colCols())
		type result struct{ y, dx, dw []float64 }
		compute := func(cols int) result {
			groupCols = cols
			r := result{make([]float64, len(dy)), make([]float64, len(x)), make([]float64, len(w))}
			conv2dForward(blas.FP32, g, x, w, nil, r.y, tc.batch, tc.o)
			conv2dBackwardInput(blas.FP32, g, dy, w, r.dx, tc.batch, tc.o)
			conv2dBackwardWeight(blas.FP32, g, x, dy, r.dw, tc.batch, tc.o)
			return r
		}
		single, grouped := compute(1), compute(1<<20)
		if g.group(tc.batch) < 2 {
			t.Fatalf("%+v: no grouping happened", tc)
		}
		for name, pair := range map[string][2][]float64{"y": {single.y, grouped.y}, "dx": {single.dx, grouped.dx}, "dw": {single.dw, grouped.dw}} {
			for i := range pair[0] {
				if math.Abs(pair[0][i]-pair[1][i]) > 1e-12 {
					t.Fatalf("%+v: %s[%d] per sample %v, grouped %v", tc, name, i, pair[0][i], pair[1][i])
				}
			}
		}
	}
}
