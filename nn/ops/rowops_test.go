package ops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
)

// randF32 returns n float32 values uniform in [lo, hi).
func randF32(rng *rand.Rand, n int, lo, hi float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(lo + (hi-lo)*rng.Float64())
	}
	return x
}

// softmaxBenchShapes are attention score tensors (B·H·N, N) of 64 images ×
// 6 heads: ViT-S/Ti at 32×32 with patch 4 (N = 65) and at 224×224 with
// patch 16 (N = 197).
var softmaxBenchShapes = []int{65, 197}

// BenchmarkSoftmaxRows is the float32 row kernels behind Softmax,
// LogSoftmax and attention: forward, backward and LogSoftmax forward over
// (64·6·N, N) scores. The rate is input elements per ns.
func BenchmarkSoftmaxRows(b *testing.B) {
	for _, n := range softmaxBenchShapes {
		rows := 64 * 6 * n
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		x := randF32(rng, rows*n, -8, 8)
		dy := randF32(rng, rows*n, -1, 1)
		y := make([]float32, rows*n)
		dx := make([]float32, rows*n)
		ops.SoftmaxRows(x, y, n)
		for _, k := range []struct {
			name string
			fn   func()
		}{
			{"fwd", func() { ops.SoftmaxRows(x, y, n) }},
			{"bwd", func() { ops.SoftmaxRowsGrad(y, dy, dx, n) }},
			{"logfwd", func() { ops.LogSoftmaxRows(x, dx, n) }},
		} {
			b.Run(fmt.Sprintf("N=%d/%s", n, k.name), func(b *testing.B) {
				b.SetBytes(int64(4 * len(x)))
				for b.Loop() {
					k.fn()
				}
				b.ReportMetric(float64(len(x))*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "elem/ns")
			})
		}
	}
}

// BenchmarkLayerNormShapes is forward and backward (fwdbwd) and the forward
// alone (fwd) of float32 LayerNorm over ViT-S tokens at 32×32 (4160 × 192)
// and ViT-B tokens at 224×224 for 4 images (788 × 768).
func BenchmarkLayerNormShapes(b *testing.B) {
	for _, s := range [][2]int{{4160, 192}, {788, 768}} {
		rng := rand.New(rand.NewPCG(1, uint64(s[1])))
		inputs := []*tensor.Dense{opstest.Rand(rng, -2, 2, s[0], s[1]), opstest.Rand(rng, 0.5, 1.5, s[1]), opstest.Rand(rng, -1, 1, s[1])}
		b.Run(fmt.Sprintf("%dx%d/fwdbwd", s[0], s[1]), func(b *testing.B) {
			benchFused(b, layerNormFunc(1e-6), inputs, []int{0, 1, 2})
		})
		b.Run(fmt.Sprintf("%dx%d/fwd", s[0], s[1]), func(b *testing.B) {
			benchFused(b, layerNormFunc(1e-6), inputs, nil)
		})
	}
}

// TestRowKernelsFloat32 checks the float32 row kernels against the float64
// ones at every row length up to 70 (all SIMD tails), with rows of logits
// spanning ±30.
func TestRowKernelsFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for n := 1; n <= 70; n++ {
		const rows = 3
		x32, dy32 := randF32(rng, rows*n, -30, 30), randF32(rng, rows*n, -1, 1)
		x64, dy64 := make([]float64, rows*n), make([]float64, rows*n)
		for i := range x32 {
			x64[i], dy64[i] = float64(x32[i]), float64(dy32[i])
		}
		y32, y64 := make([]float32, rows*n), make([]float64, rows*n)
		d32, d64 := make([]float32, rows*n), make([]float64, rows*n)
		check := func(what string, got []float32, want []float64, tol float64) {
			t.Helper()
			for i, w := range want {
				if math.Abs(float64(got[i])-w) > tol*math.Max(1, math.Abs(w)) {
					t.Fatalf("n=%d %s[%d] = %g, want %g", n, what, i, got[i], w)
				}
			}
		}
		ops.SoftmaxRows(x32, y32, n)
		ops.SoftmaxRows(x64, y64, n)
		check("SoftmaxRows", y32, y64, 1e-6)
		ops.SoftmaxRowsGrad(y32, dy32, d32, n)
		ops.SoftmaxRowsGrad(y64, dy64, d64, n)
		check("SoftmaxRowsGrad", d32, d64, 1e-6)
		ops.LogSoftmaxRows(x32, y32, n)
		ops.LogSoftmaxRows(x64, y64, n)
		check("LogSoftmaxRows", y32, y64, 1e-6)
		ops.LogSoftmaxRowsGrad(y32, dy32, d32, n)
		ops.LogSoftmaxRowsGrad(y64, dy64, d64, n)
		check("LogSoftmaxRowsGrad", d32, d64, 2e-6*float64(n))
	}
}
