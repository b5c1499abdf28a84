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

func layerNormFunc(eps float64) opstest.Func {
	return func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		return ops.LayerNorm(in[0], in[1], in[2], eps)
	}
}

func TestLayerNormGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, shape := range [][]int{{3, 5}, {2, 3, 4}, {1, 7}, {6, 16}} {
		d := shape[len(shape)-1]
		inputs := []*tensor.Dense{opstest.Rand(rng, -2, 2, shape...), opstest.Rand(rng, 0.5, 1.5, d), opstest.Rand(rng, -1, 1, d)}
		f := layerNormFunc(1e-6)
		opstest.GradCheck(t, f, inputs, []int{0, 1, 2}, opstest.Options{})
		opstest.AgreeF32(t, f, inputs, []int{0, 1, 2}, 2e-5)
	}
}

// TestLayerNormGradientManyRows has more rows than one worker takes, so
// the per-worker partial sums of dweight are exercised.
func TestLayerNormGradientManyRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	inputs := []*tensor.Dense{opstest.Rand(rng, -2, 2, 8, 600, 8), opstest.Rand(rng, 0.5, 1.5, 8), opstest.Rand(rng, -1, 1, 8)}
	opstest.GradCheck(t, layerNormFunc(1e-6), inputs, []int{0, 1, 2}, opstest.Options{MaxSamples: 16})
}

func TestLayerNormValues(t *testing.T) {
	const eps = 1e-6
	x := []float64{
		1, 2, 3, 4,
		5, 5, 5, 5, // zero variance: y = bias
		1e4 + 1, 1e4 + 2, 1e4 + 3, 1e4 + 4, // large mean: needs the two-pass variance
	}
	w := []float64{1, 2, 0.5, -1}
	b := []float64{0, 1, 0, 0.5}
	// Row 1: mean 2.5, biased variance 1.25.
	s := 1 / math.Sqrt(1.25+eps)
	row := []float64{-1.5 * s * 1, -0.5*s*2 + 1, 0.5 * s * 0.5, 1.5*s*-1 + 0.5}
	want := append(append(append([]float64{}, row...), b...), row...)
	inputs := []*tensor.Dense{dense(x, 3, 4), dense(w, 4), dense(b, 4)}
	got, _ := fusedEval(t, layerNormFunc(eps), inputs, nil, nil, tensor.Float64)
	assertClose(t, "float64", got, want, 1e-12)
	got, _ = fusedEval(t, layerNormFunc(eps), inputs, nil, nil, tensor.Float32)
	// 1e4+k in float32 is exact, so the large-mean row loses nothing either.
	assertClose(t, "float32", got, want, 1e-6)
}

// TestLayerNormGradValues checks the backward against the closed form
// dx = rstd·(g − mean(g) − x̂·mean(g·x̂)), dweight = Σ dy·x̂, dbias = Σ dy.
func TestLayerNormGradValues(t *testing.T) {
	x := []float64{1, 2, 4, 0, -1, 3}
	w := []float64{2, -1, 0.5}
	dy := []float64{1, 0, -2, 0.5, 3, 1}
	var wantW, wantB [3]float64
	var dx []float64
	for r := 0; r < 2; r++ {
		xr, gr := x[3*r:3*r+3], dy[3*r:3*r+3]
		m := (xr[0] + xr[1] + xr[2]) / 3
		v := ((xr[0]-m)*(xr[0]-m) + (xr[1]-m)*(xr[1]-m) + (xr[2]-m)*(xr[2]-m)) / 3
		s := 1 / math.Sqrt(v)
		var xh, g [3]float64
		var mg, mgx float64
		for j := range 3 {
			xh[j] = (xr[j] - m) * s
			g[j] = gr[j] * w[j]
			mg += g[j] / 3
			mgx += g[j] * xh[j] / 3
			wantW[j] += gr[j] * xh[j]
			wantB[j] += gr[j]
		}
		for j := range 3 {
			dx = append(dx, s*(g[j]-mg-xh[j]*mgx))
		}
	}
	_, grads := fusedEval(t, layerNormFunc(0), []*tensor.Dense{dense(x, 2, 3), dense(w, 3), dense(make([]float64, 3), 3)},
		dense(dy, 2, 3), []int{0, 1, 2}, tensor.Float64)
	assertClose(t, "dx", grads[0], dx, 1e-12)
	assertClose(t, "dweight", grads[1], wantW[:], 1e-12)
	assertClose(t, "dbias", grads[2], wantB[:], 1e-12)
}

func TestLayerNormRejectsBadInputs(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(2, 3, 4), gorgonia.WithName("x"))
	w4 := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(4), gorgonia.WithName("w4"))
	w3 := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("w3"))
	for _, tc := range []struct {
		name string
		w, b *gorgonia.Node
		eps  float64
	}{
		{"weight of 3 features", w3, w4, 1e-6},
		{"bias of 3 features", w4, w3, 1e-6},
		{"nil bias", w4, nil, 1e-6},
		{"negative eps", w4, w4, -1},
		{"NaN eps", w4, w4, math.NaN()},
	} {
		if _, err := ops.LayerNorm(x, tc.w, tc.b, tc.eps); err == nil {
			t.Errorf("%s: expected an error", tc.name)
		}
	}
}

// BenchmarkLayerNorm is forward and backward of LayerNorm over ViT-B tokens
// (64 images × 65 tokens, 768 features) in float32.
func BenchmarkLayerNorm(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	inputs := []*tensor.Dense{opstest.Rand(rng, -2, 2, 64*65, 768), opstest.Rand(rng, 0.5, 1.5, 768), opstest.Rand(rng, -1, 1, 768)}
	benchFused(b, layerNormFunc(1e-6), inputs, []int{0, 1, 2})
}

// BenchmarkLayerNormForward is the forward pass alone.
func BenchmarkLayerNormForward(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	inputs := []*tensor.Dense{opstest.Rand(rng, -2, 2, 64*65, 768), opstest.Rand(rng, 0.5, 1.5, 768), opstest.Rand(rng, -1, 1, 768)}
	benchFused(b, layerNormFunc(1e-6), inputs, nil)
}
