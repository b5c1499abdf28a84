package ops

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestLayerNormWeightGradFromInputPass checks, in float32 and float64,
// that LayerNorm's weight gradient, whose partial sums the input
// gradient's pass takes, is bit for bit the one its op sums alone from x
// and dy, and that the op took those partials.
func TestLayerNormWeightGradFromInputPass(t *testing.T) {
	const rows, d = 1200, 48 // two workers' chunks at GOMAXPROCS 2 and more (rowsWorkGrain)
	rng := rand.New(rand.NewPCG(15, 16))
	x, w, b, r := make([]float64, rows*d), make([]float64, d), make([]float64, d), make([]float64, rows*d)
	for _, s := range [][]float64{x, w, b, r} {
		for i := range s {
			s[i] = rng.NormFloat64()
		}
	}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		g := gorgonia.NewGraph()
		node := func(name string, data []float64, shape ...int) *gorgonia.Node {
			v := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))
			if dt == tensor.Float32 {
				f := make([]float32, len(data))
				for i, e := range data {
					f[i] = float32(e)
				}
				v = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(f))
			}
			return gorgonia.NodeFromAny(g, v, gorgonia.WithName(name))
		}
		xn, wn, bn, rn := node("x", x, 3, rows/3, d), node("w", w, d), node("b", b, d), node("r", r, 3, rows/3, d)
		y, err := LayerNorm(xn, wn, bn, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		prog, grads := runProjectedGrads(t, y, rn, xn, wn)
		var weightOp *layerNormGrad
		for _, nd := range g.AllNodes() {
			if op, ok := nd.Op().(*layerNormGrad); ok && op.weight {
				weightOp = op
			}
		}
		if weightOp.partials.from.first != nil {
			t.Fatalf("%v: the input gradient's partial sums were left, not taken", dt)
		}
		got := prog.Value(grads[1]).(*tensor.Dense)
		alone := tensor.New(tensor.Of(dt), tensor.WithShape(d))
		mean, rstd := weightOp.fwd.mean, weightOp.fwd.rstd
		if dt == tensor.Float32 {
			layerNormGradWeight(xn.Value().Data().([]float32), rn.Value().Data().([]float32), alone.Data().([]float32), mean, rstd, new(weightPartials))
		} else {
			layerNormGradWeight(x, r, alone.Data().([]float64), mean, rstd, new(weightPartials))
		}
		for j := range d {
			a, e := got.Get(j), alone.Get(j)
			if bitsOf(a) != bitsOf(e) {
				t.Fatalf("%v: dweight[%d] = %v, summed alone %v", dt, j, a, e)
			}
		}
	}
}

func bitsOf(v any) uint64 {
	if f, ok := v.(float32); ok {
		return uint64(math.Float32bits(f))
	}
	return math.Float64bits(v.(float64))
}

// TestLayerNormBiasGradFromInputPass checks, in float32 and float64, that
// the bias gradient a mixed-precision LayerNorm takes from its input
// gradient's pass is bit for bit the one its op sums alone from dy, each
// worker's chunk of rows in order and the chunks added in order, that the
// op took the pass's sums, and that with one worker it is SumRows's.
func TestLayerNormBiasGradFromInputPass(t *testing.T) {
	t.Run("float32", func(t *testing.T) { testLayerNormBiasSums[float32](t) })
	t.Run("float64", func(t *testing.T) { testLayerNormBiasSums[float64](t) })
}

func testLayerNormBiasSums[T Float](t *testing.T) {
	const rows, d = 1200, 48 // two workers' chunks at GOMAXPROCS 2 and more (rowsWorkGrain)
	rng := rand.New(rand.NewPCG(17, 18))
	x, w, dy := make([]T, rows*d), make([]T, d), make([]T, rows*d)
	for _, s := range [][]T{x, w, dy} {
		for i := range s {
			s[i] = T(rng.NormFloat64())
		}
	}
	mean, rstd := make([]float64, rows), make([]float64, rows)
	for r := range rows {
		mean[r], rstd[r] = rng.NormFloat64(), 1+rng.Float64()
	}
	want := func(workers int) []T {
		db := make([]T, d)
		for wk := range workers {
			lo, hi := chunkRows(rows, workers, wk)
			part := make([]T, d)
			for r := lo; r < hi; r++ {
				for j := range d {
					part[j] += dy[r*d+j]
				}
			}
			for j := range d {
				db[j] += part[j]
			}
		}
		return db
	}
	same := func(what string, got, want []T) {
		t.Helper()
		for j := range want {
			if bitsOf(got[j]) != bitsOf(want[j]) {
				t.Fatalf("%s: dbias[%d] = %v, want %v", what, j, got[j], want[j])
			}
		}
	}
	workers := parallelWorkers(rows, max(1, rowsWorkGrain/d))
	if workers < 2 {
		t.Logf("one worker at GOMAXPROCS %d", runtime.GOMAXPROCS(0))
	}
	p := &weightPartials{withBias: true}
	layerNormGradInput(x, w, dy, nil, make([]T, rows*d), mean, rstd, p)
	got := make([]T, d)
	layerNormBiasSums(dy, got, rows, p)
	if p.biasFrom.first != nil {
		t.Fatalf("the input gradient's partial sums of dbias were left, not taken")
	}
	same("from the input gradient's pass", got, want(workers))
	layerNormBiasSums(dy, got, rows, &weightPartials{withBias: true})
	same("summed alone", got, want(workers))

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	layerNormBiasSums(dy, got, rows, &weightPartials{withBias: true})
	alone := make([]T, d)
	(&sumColumns[T]{dy, alone}).Range(0, d)
	same("with one worker, against SumRows", got, alone)
}
