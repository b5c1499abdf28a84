package blas

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/vit-train/vit-train/nn/fmapeak"
	"github.com/vit-train/vit-train/nn/parallel"
)

// Variant is the arithmetic of a float32 matrix product. The zero
// Variant is FP32.
type Variant string

const (
	// FP32 multiplies and adds in float32: Gemm's products, the default,
	// and the arithmetic of every float64 product whatever the variant.
	FP32 Variant = "fp32"
	// BF16 rounds op(A) and op(B) to bfloat16 (to nearest, ties to even;
	// denormals to zero) and sums their products in float32 with
	// VDPBF16PS (AVX512_BF16): in each K block, the products of steps
	// 2q+1 and 2q are added in that order, each sum rounded to nearest
	// even, denormal sums flushed to zero; each block's sum then goes into
	// C as Gemm's float32 kernel adds its blocks.
	BF16 Variant = "bf16"
	// FP16 rounds op(A) and op(B) to float16 (to nearest, ties to even;
	// subnormals kept, magnitudes from 65520 up infinite) and multiplies
	// and adds in float16 with VFMADD231PH (AVX512_FP16), each step
	// rounded to nearest even, over runs of 32 K steps; each run's sum is
	// widened to float32 and added to its K block's float32 sum, which
	// goes into C as Gemm's float32 kernel adds its blocks. Sums past
	// 65504 overflow: the operands must be of moderate size.
	FP16 Variant = "fp16"
	// AMX rounds op(A) and op(B) to bfloat16 as BF16 does and multiplies
	// them on the AMX tiles with TDPBF16PS. Each output sums its K steps
	// in instructions of 32 steps (the last padded with zeros): within
	// one, the even steps and the odd steps are two chains of float32
	// fused multiply-adds from zero, each rounded to nearest even,
	// denormal inputs read as zero and denormal results flushed to zero;
	// the two chains' sum, rounded and flushed so, is added to the
	// output's float32 sum, rounded and flushed again (Intel SDM,
	// TDPBF16PS; shared/amx settles it on the hardware). The sum runs on
	// unrounded from K block to K block, so that it does not depend on
	// the blocking, and goes into C once, as a single K block's.
	AMX Variant = "amx"
)

// Variants lists every variant, FP32 first.
func Variants() []Variant { return []Variant{FP32, BF16, FP16, AMX} }

// Runs reports whether this build and CPU run v's products: FP32 always,
// a low-precision variant where the default build's kernel for it has the
// instructions it needs.
func (v Variant) Runs() bool { return v.IsFP32() || variantRuns(v) }

// Describe names v's arithmetic in a few words.
func (v Variant) Describe() string {
	switch {
	case v.IsFP32():
		return "float32"
	case v == BF16:
		return "bf16 (bfloat16 operands, float32 sums, VDPBF16PS)"
	case v == FP16:
		return "fp16 (float16 operands and sums of 32 steps, float32 totals, VFMADD231PH)"
	case v == AMX:
		return "amx (bfloat16 operands, float32 sums, TDPBF16PS on AMX tiles)"
	}
	return string(v)
}

// IsFP32 reports whether v is FP32 (or the zero Variant).
func (v Variant) IsFP32() bool { return v == FP32 || v == "" }

// lowPrecisionMinK is the fewest K steps a product takes in a
// low-precision variant; shorter products run in float32 whatever the
// variant. Their time goes to reading and writing C, not to multiply-adds,
// so a faster multiply-add gains nothing and rounding the operands costs
// time: on an AMD EPYC (family 25 model 17, Zen 4), vit_fmnist_patch4_28's
// mixed-precision training step, whose attention products take 16 and 50
// steps and patch embedding 16, ran 1.19× faster (median of 5 interleaved
// rounds) with those in float32.
const lowPrecisionMinK = 64

// arithmetic is the variant a product of k steps in v runs in: v, or FP32
// for products shorter than lowPrecisionMinK.
func (v Variant) arithmetic(k int) Variant {
	if k < lowPrecisionMinK {
		return FP32
	}
	return v
}

// GemmAs computes C = alpha·op(A)·op(B) + beta·C + 1·biasᵀ (bias nil for
// none) as GemmBias does (Gemm without a bias), in v's arithmetic for
// float32 operands and k ≥ 64. FP32, float64 operands and products of
// fewer K steps (see lowPrecisionMinK) are Gemm's and GemmBias's products
// bit for bit. It panics for a variant that does not run here (see Runs).
func GemmAs[T float32 | float64](v Variant, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, bias []T) {
	GemmAsThen(v, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, bias, nil)
}

// Then is work on a block C[i0:i1, j0:j1] of a product whose values are
// final, such as an activation applied in place (see GemmAsThen).
type Then = func(i0, i1, j0, j1 int)

// GemmAsThen is GemmAs followed by then (nil: none) on blocks of C that
// tile it, each once. In the low-precision variants' kernels each block is a strip of
// rows that the kernel has just stored, still in cache, and then runs on
// the goroutine that computed it: calls for different blocks may run at
// once. Other products call then on rows of the whole C after it. C holds
// GemmAs's values when then sees them.
func GemmAsThen[T float32 | float64](v Variant, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, bias []T, then Then) {
	gemmAs(v, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, bias, then, nil)
}

// GemmAsSums is GemmAs for float32 that also sets sums[:m] to RowSums of
// op(A): a linear layer's weight gradient dYᵀ·X with its bias gradient,
// the sums of dYᵀ's rows. Where v's kernel converts op(A) = Aᵀ row by row
// (amx), the conversion adds them up as it reads A, rather than a second
// pass reading A again.
func GemmAsSums(v Variant, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias, sums []float32) {
	if len(sums) < m {
		panic("blas: insufficient length of sums")
	}
	gemmAs(v, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, bias, nil, sums)
}

// gemmAs is GemmAsThen setting sums (nil: none, and always for float64)
// as GemmAsSums does.
func gemmAs[T float32 | float64](v Variant, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, bias []T, then Then, sums []float32) {
	a32, low := any(a).([]float32)
	v = v.arithmetic(k)
	if sums != nil && (v.IsFP32() || m == 0 || n == 0) {
		RowSums(transA, m, k, a32, lda, sums) // no kernel call to take them
	}
	if v.IsFP32() || !low {
		if bias == nil {
			Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		} else {
			GemmBias(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, bias)
		}
		if then != nil {
			ThenRows(m, n, then)
		}
		return
	}
	if !v.Runs() {
		panic(fmt.Sprintf("blas: the %s product does not run on this CPU or build", v))
	}
	if m == 0 || n == 0 {
		return
	}
	if bias != nil && len(bias) < n {
		panic("blas: insufficient length of bias")
	}
	variantGemmThen(v, transA, transB, m, n, k, float32(alpha), a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc, any(bias).([]float32), then, sums)
}

// ThenRows calls then on blocks of whole rows that tile an (m, n) C, in
// parallel: the blocks of a product computed without calling then.
func ThenRows(m, n int, then Then) {
	parallel.Loop(m, max(1, thenGrain/max(n, 1)), thenRows{then, n})
}

// thenGrain is about the fewest elements one ThenRows block holds.
const thenGrain = 1 << 14

// thenRows is ThenRows's loop body.
type thenRows struct {
	then Then
	n    int
}

func (t *thenRows) Range(lo, hi int) { t.then(lo, hi, 0, t.n) }

// PackBAs is PackB for GemmPacked products in v's arithmetic: float32
// operands of k ≥ 64 steps are packed in v's format, so that GemmPacked
// computes GemmAs(v, …)'s products bit for bit.
func PackBAs[T float32 | float64](v Variant, transB bool, k, n int, b []T, ldb int) *PackedB[T] {
	if _, low := any(b).([]float32); v.arithmetic(k).IsFP32() || !low {
		return PackB(transB, k, n, b, ldb)
	}
	if !v.Runs() {
		panic(fmt.Sprintf("blas: the %s product does not run on this CPU or build", v))
	}
	return packB(variantPanels(v), transB, k, n, b, ldb)
}

// RepackAlign is the RowAlign of the PackedB that PackBAs(v, transB, k,
// …) returns, known before packing.
func RepackAlign(v Variant, transB bool, k int) int {
	if v.arithmetic(k).IsFP32() {
		return panelRowAlign(activePanels(), transB)
	}
	return panelRowAlign(variantPanels(v), transB)
}

// Mixed returns the variant that mixed-precision products run: the
// low-precision variant with the highest multiply-add throughput on this
// CPU, if that beats float32's by a quarter or more (see fasterVariant),
// else FP32. The environment variable VIT_TRAIN_LOWP, read on the first
// call, forces it: "bf16" (or another variant's name), or "none" for
// FP32; a variant the CPU does not run makes Mixed panic.
func Mixed() Variant {
	mixedOnce.Do(func() { mixed = chooseMixed(os.Getenv("VIT_TRAIN_LOWP"), fasterVariant) })
	return mixed
}

var (
	mixedOnce sync.Once
	mixed     Variant
)

// chooseMixed returns the variant VIT_TRAIN_LOWP's value env names, or
// fastest() when env is empty.
func chooseMixed(env string, fastest func() Variant) Variant {
	switch env {
	case "":
		return fastest()
	case "none":
		return FP32
	}
	var names []string
	for _, v := range Variants()[1:] {
		names = append(names, string(v))
		if string(v) == env {
			if !v.Runs() {
				panic(fmt.Sprintf("blas: VIT_TRAIN_LOWP=%s, but this CPU or build does not run that product", env))
			}
			return v
		}
	}
	panic(fmt.Sprintf("blas: VIT_TRAIN_LOWP=%q is not a variant (one of none, %s)", env, strings.Join(names, ", ")))
}

// fasterVariant measures, on one thread, the multiply-add peak of float32
// and of each low-precision variant that runs here (nn/fmapeak), and
// returns the fastest variant if its peak is at least a quarter above
// float32's (packing and converting the operands costs the rest), else
// FP32. The kinds are timed in turn, three rounds, each keeping its best,
// so that other work on the core slows them alike.
func fasterVariant() Variant {
	var low []Variant
	for _, v := range Variants()[1:] {
		if v.Runs() {
			low = append(low, v)
		}
	}
	if len(low) == 0 {
		return FP32
	}
	best := map[Variant]float64{}
	for range 3 {
		for _, v := range append([]Variant{FP32}, low...) {
			r := fmapeak.Measure(fmapeak.Kind(v), 1, 10*time.Millisecond)
			best[v] = max(best[v], r.GFLOPs)
		}
	}
	pick := FP32
	for _, v := range low {
		if best[v] >= 1.25*best[FP32] && best[v] > best[pick] {
			pick = v
		}
	}
	return pick
}
