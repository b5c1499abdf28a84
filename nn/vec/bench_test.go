package vec

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchN is the length of the benchmark slices: 16 KiB each, so a kernel's
// working set stays in L1/L2 and the loop itself is measured.
const benchN = 4096

func benchSlice(rng *rand.Rand, n int, lo, hi float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(lo + (hi-lo)*rng.Float64())
	}
	return x
}

// benchKernel runs fn over n elements for each kernel set, reporting
// elements per ns and GB/s of the given bytes per element.
func benchKernel(b *testing.B, n, bytesPerElem int, fn func()) {
	for _, l := range availableLevels() {
		b.Run(levelNames[l], func(b *testing.B) {
			defer setLevel(l)()
			b.SetBytes(int64(bytesPerElem * n))
			for b.Loop() {
				fn()
			}
			ns := float64(b.Elapsed().Nanoseconds())
			b.ReportMetric(float64(n)*float64(b.N)/ns, "elem/ns")
			b.ReportMetric(float64(bytesPerElem*n)*float64(b.N)/ns, "GB/s")
		})
	}
}

func BenchmarkKernels(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := benchSlice(rng, benchN, -8, 8), benchSlice(rng, benchN, -1, 1)
	w, bias := benchSlice(rng, benchN, 0.5, 1.5), benchSlice(rng, benchN, -1, 1)
	d, e := make([]float32, benchN), make([]float32, benchN)
	acc := make([]float64, benchN)
	var sink float32
	for _, k := range []struct {
		name  string
		bytes int // read and written per element
		fn    func()
	}{
		{"Exp", 8, func() { Exp(d, x) }},
		{"ExpSubMaxSum", 8, func() { sink += ExpSubMaxSum(d, x, 8) }},
		{"Max", 4, func() { sink += Max(x) }},
		{"Sum", 4, func() { sink += Sum(x) }},
		{"Dot", 8, func() { sink += Dot(x, y) }},
		{"SumSqDev", 4, func() { sink += SumSqDev(x, 0.5) }},
		{"Scale", 8, func() { Scale(d, x, 0.5) }},
		{"AXPY", 12, func() { AXPY(d, x, 1e-9) }},
		{"Add", 12, func() { Add(d, x, y) }},
		{"Mul", 12, func() { Mul(d, x, y) }},
		{"MulDiff", 12, func() { MulDiff(d, y, x, 0.5) }},
		{"ReLU", 8, func() { ReLU(d, x) }},
		{"ReLUGrad", 12, func() { ReLUGrad(d, x, y) }},
		{"Erf", 8, func() { Erf(d, x) }},
		{"GELU", 8, func() { GELU(d, x) }},
		{"GELUAndDeriv", 12, func() { GELUAndDeriv(d, e, x) }},
		{"LayerNormRow", 16, func() { LayerNormRow(d, x, w, bias, 0.1, 1.1) }},
		{"LayerNormGradSums", 12, func() { a, c := LayerNormGradSums(x, y, w, 0.1, 1.1); sink += a + c }},
		{"LayerNormGradRow", 16, func() { LayerNormGradRow(d, x, y, w, 0.1, 1.1, 0.2, 0.3) }},
		{"LayerNormGradWeightAcc", 24, func() { LayerNormGradWeightAcc(acc, x, y, 0.1, 1.1) }},
		{"SumSquares64", 4, func() { sink += float32(SumSquares64(x)) }},
		{"SumSquares64x4", 4, func() {
			q := benchN / 4
			s := SumSquares64x4(x[:q], x[q:2*q], x[2*q:3*q], x[3*q:4*q])
			sink += float32(s[0])
		}},
	} {
		b.Run(k.name, func(b *testing.B) { benchKernel(b, benchN, k.bytes, k.fn) })
	}
	_ = sink
}

// BenchmarkAdamW is one update of n values: 28 bytes of memory traffic
// each (read p, g, m, v; write p, m, v). 4096 values stay in cache;
// 8M values stream from memory.
func BenchmarkAdamW(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 1))
	c := AdamWCoef{0.9, 0.1, 0.999, 0.001, 1e-8, 1.2, 0.9999, 1e-3, 0.5}
	for _, n := range []int{benchN, 8 << 20} {
		p, g, m := benchSlice(rng, n, -1, 1), benchSlice(rng, n, -1, 1), benchSlice(rng, n, -0.1, 0.1)
		v := benchSlice(rng, n, 0, 0.01)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			benchKernel(b, n, 28, func() { AdamW(p, g, m, v, c) })
		})
	}
}

// BenchmarkSoftmaxRows times softmax in place over short rows, as
// attention runs it (50 tokens: vit_fmnist_patch4_28; 65:
// vit_cifar_patch4_32; 197: ViT-B/16): SoftmaxRows over them all, rows
// n apart and rows that each start a 64-byte line; Softmax a row at a
// time; and the same arithmetic as three calls a row.
func BenchmarkSoftmaxRows(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{50, 65, 197} {
		const rows = 1024
		lines := (n + 15) / 16 * 16
		x := benchSlice(rng, lines*rows, -8, 8)
		d := make([]float32, len(x))
		for _, way := range []struct {
			name string
			fn   func()
		}{
			{"rows", func() { SoftmaxRows(d, d, rows, n, n) }},
			{"rows-on-lines", func() { SoftmaxRows(d, d, rows, n, lines) }},
			{"fused", func() {
				for r := 0; r < rows*n; r += n {
					Softmax(d[r:r+n], d[r:r+n])
				}
			}},
			{"three-calls", func() {
				for r := 0; r < rows*n; r += n {
					Scale(d[r:r+n], d[r:r+n], 1/ExpSubMaxSum(d[r:r+n], d[r:r+n], Max(d[r:r+n])))
				}
			}},
		} {
			b.Run(fmt.Sprintf("n=%d/%s", n, way.name), func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					copy(d, x)
					b.StartTimer()
					way.fn()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
			})
		}
	}
}
