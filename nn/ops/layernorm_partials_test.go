package ops

import (
	"math"
	"math/rand/v2"
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
