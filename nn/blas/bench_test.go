package blas

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/vit-train/vit-train/nn/fmapeak"
)

// gemmShape is a product from the models: op(A) (m, k), op(B) (k, n),
// C (m, n), with row strides lda, ldb, ldc (0: minimal). weight marks a
// B that is a linear layer's weight, which training (with AdamW) and
// inference keep packed from one product to the next (PackBAs).
type gemmShape struct {
	name          string
	tA, tB        bool
	m, n, k       int
	lda, ldb, ldc int
	weight        bool
}

// benchShapes are the products of ViT-B/16 at batch 4 (788 tokens, width
// 768, MLP 3072) and some at batch 32 (6304 tokens), of vit_cifar at batch 64 (4160 tokens, width 192, MLP
// 768, 3 heads of 64) and of vit_fmnist at patch 2 and batch 64 (12608
// tokens, width 64, MLP 128, 4 heads of 16), and attention's per-head
// products (65 tokens for vit_cifar, 197 for ViT-B/16 and vit_fmnist at
// patch 2), read in place from the (tokens, 3·width) qkv rows as
// nn/ops/attention.go does.
var benchShapes = []gemmShape{
	// Linear layers: y = x·Wᵀ (NT), dX = dY·W (NN), dW = dYᵀ·x (TN).
	{name: "vitb_qkv_fwd", tB: true, m: 788, n: 2304, k: 768, weight: true},
	{name: "vitb_proj_fwd", tB: true, m: 788, n: 768, k: 768, weight: true},
	{name: "vitb_fc1_fwd", tB: true, m: 788, n: 3072, k: 768, weight: true},
	{name: "vitb_fc2_fwd", tB: true, m: 788, n: 768, k: 3072, weight: true},
	{name: "vitb_qkv_dX", m: 788, n: 768, k: 2304, weight: true},
	{name: "vitb_fc2_dX", m: 788, n: 3072, k: 768, weight: true},
	{name: "vitb_qkv_dW", tA: true, m: 2304, n: 768, k: 788},
	{name: "vitb_qkv_dWt", tA: true, m: 768, n: 2304, k: 788},
	{name: "vitb_qkv_dXt", tB: true, m: 788, n: 768, k: 2304, weight: true},
	// ViT-B/16 at batch 32 (6304 tokens).
	{name: "vitb32_qkv_fwd", tB: true, m: 6304, n: 2304, k: 768, weight: true},
	{name: "vitb32_fc2_fwd", tB: true, m: 6304, n: 768, k: 3072, weight: true},
	{name: "vitb32_fc2_dX", m: 6304, n: 3072, k: 768, weight: true},
	{name: "vitb32_qkv_dW", tA: true, m: 2304, n: 768, k: 6304},
	{name: "vitb32_fc1_dW", tA: true, m: 3072, n: 768, k: 6304},
	{name: "cifar_qkv_fwd", tB: true, m: 4160, n: 576, k: 192, weight: true},
	{name: "cifar_proj_fwd", tB: true, m: 4160, n: 192, k: 192, weight: true},
	{name: "cifar_fc1_fwd", tB: true, m: 4160, n: 768, k: 192, weight: true},
	{name: "cifar_fc2_fwd", tB: true, m: 4160, n: 192, k: 768, weight: true},
	{name: "cifar_qkv_dX", m: 4160, n: 192, k: 576, weight: true},
	{name: "cifar_qkv_dW", tA: true, m: 576, n: 192, k: 4160},
	{name: "cifar_fc2_dW", tA: true, m: 192, n: 768, k: 4160},
	// Attention, per head: S = Q·Kᵀ (NT), O = P·V (NN), dP = dO·Vᵀ (NT),
	// dV = Pᵀ·dO (TN).
	{name: "attn65_qk", tB: true, m: 65, n: 65, k: 64, lda: 576, ldb: 576},
	{name: "attn65_pv", m: 65, n: 64, k: 65, ldb: 576, ldc: 192},
	{name: "attn65_dv", tA: true, m: 65, n: 64, k: 65, ldb: 192, ldc: 576},
	{name: "attn197_qk", tB: true, m: 197, n: 197, k: 64, lda: 2304, ldb: 2304},
	{name: "attn197_pv", m: 197, n: 64, k: 197, ldb: 2304, ldc: 768},
	{name: "attn197_dv", tA: true, m: 197, n: 64, k: 197, ldb: 768, ldc: 2304},
	{name: "fmnist2_qkv_fwd", tB: true, m: 12608, n: 192, k: 64, weight: true},
	{name: "fmnist2_fc2_fwd", tB: true, m: 12608, n: 64, k: 128, weight: true},
	{name: "fmnist2_qkv_dX", m: 12608, n: 64, k: 192, weight: true},
	{name: "fmnist2_qkv_dW", tA: true, m: 192, n: 64, k: 12608},
	{name: "attn197h16_qk", tB: true, m: 197, n: 197, k: 16, lda: 192, ldb: 192},
	{name: "attn197h16_pv", m: 197, n: 16, k: 197, ldb: 192, ldc: 64},
	{name: "attn197h16_dv", tA: true, m: 197, n: 16, k: 197, ldb: 64, ldc: 192},
}

// operands returns A, B and C for s, filled with small repeating values,
// and their row strides.
func (s gemmShape) operands() (a, b, c []float32, lda, ldb, ldc int) {
	lda, ldb, ldc = s.strides()
	ra, rb := s.m, s.k
	if s.tA {
		ra = s.k
	}
	if s.tB {
		rb = s.n
	}
	a, b, c = make([]float32, ra*lda), make([]float32, rb*ldb), make([]float32, s.m*ldc)
	for i := range a {
		a[i] = float32(i%7) * 0.1
	}
	for i := range b {
		b[i] = float32(i%5) * 0.1
	}
	return a, b, c, lda, ldb, ldc
}

func (s gemmShape) strides() (lda, ldb, ldc int) {
	lda, ldb, ldc = s.lda, s.ldb, s.ldc
	if lda == 0 {
		lda = s.k
		if s.tA {
			lda = s.m
		}
	}
	if ldb == 0 {
		ldb = s.n
		if s.tB {
			ldb = s.k
		}
	}
	if ldc == 0 {
		ldc = s.n
	}
	return
}

// BenchmarkSgemmShapes reports GFLOP/s of each model product on every
// float32 kernel of this build (see benchKernels), and their share of the
// float32 peak (see reportRates).
func BenchmarkSgemmShapes(b *testing.B) {
	for _, kern := range benchKernels() {
		for _, s := range benchShapes {
			b.Run(fmt.Sprintf("%s/%s", kern.name, s.name), func(b *testing.B) {
				kern.use(b)
				a, w, c, lda, ldb, ldc := s.operands()
				Gemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, w, ldb, 0, c, ldc)
				b.ResetTimer()
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					Gemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, w, ldb, 0, c, ldc)
				}
				reportRates(b, s, cpu0, fmapeak.FP32)
			})
		}
	}
}

// reportRates reports the b.N products of shape s timed since the
// benchmark's timer was reset, cpu0 the process's CPU time then: GFLOP/s,
// GFLOP per CPU-second, and "%peak", the share of the peak of kind
// measured on the same threads (reportPeakShare).
func reportRates(b *testing.B, s gemmShape, cpu0 time.Duration, kind fmapeak.Kind) {
	flop := 2 * float64(s.m) * float64(s.n) * float64(s.k) * float64(b.N)
	rate := flop / b.Elapsed().Seconds() / 1e9
	b.ReportMetric(rate, "GFLOP/s")
	if cpu := (cpuTime() - cpu0).Seconds(); cpu > 0 {
		b.ReportMetric(flop/cpu/1e9, "GFLOP/cpu-s")
	}
	b.StopTimer()
	reportPeakShare(b, kind, rate)
}

// peakKey is a kind of arithmetic on a number of threads.
type peakKey struct {
	kind    fmapeak.Kind
	threads int
}

// measuredPeaks holds the peak of each kind of arithmetic on each number
// of threads, in GFLOP/s, as reportPeakShareOn measured it.
var measuredPeaks = struct {
	sync.Mutex
	gflops map[peakKey]float64
}{gflops: map[peakKey]float64{}}

// reportPeakShare is reportPeakShareOn for products on GOMAXPROCS threads.
func reportPeakShare(b *testing.B, kind fmapeak.Kind, rate float64) {
	reportPeakShareOn(b, kind, runtime.GOMAXPROCS(0), rate)
}

// reportPeakShareOn reports rate, GFLOP/s of products on threads
// threads, as "%peak": its share of the peak of kind on as many threads
// (fmapeak.PeakAbove), measured with the first rate of kind and again
// whenever a rate is above it, so that no share is above 100%. Nothing is
// reported where kind's loop does not run.
func reportPeakShareOn(b *testing.B, kind fmapeak.Kind, threads int, rate float64) {
	measuredPeaks.Lock()
	defer measuredPeaks.Unlock()
	key := peakKey{kind, threads}
	peak := measuredPeaks.gflops[key]
	if peak == 0 || rate > peak {
		measured, _ := fmapeak.PeakAbove(kind, threads, rate)
		peak = max(peak, measured.GFLOPs)
		measuredPeaks.gflops[key] = peak
	}
	if peak > 0 {
		b.ReportMetric(100*rate/peak, "%peak")
	}
}
