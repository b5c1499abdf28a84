// Package vec holds float32 slice kernels for the element-wise and per-row
// work of a training step: exp and softmax pieces, erf and GELU, LayerNorm
// rows, the AdamW update and the gradient norm's sum of squares.
//
// On amd64 each kernel has an AVX-512 (F, BW, DQ, VL) and an AVX2+FMA
// version in assembly, picked once at start-up from the CPU's features;
// other CPUs and architectures, and builds with the purego tag, run the
// pure-Go versions in this package. [Implementation] names the one in use.
//
// Kernels read len(x) elements of their input x (or their first input) and
// write as many to dst; any other slice must hold at least that many, or
// the kernel panics. dst may be the same slice as an input (the same first
// element), not a partial overlap. Sums are accumulated in float32 over
// many lanes, so their rounding differs between implementations and from a
// sequential loop, by a few ulps of the sum of magnitudes.
package vec

import "fmt"

// Exp sets dst[i] = e^x[i] for i < len(x), with a relative error below
// 2e-7 where the result is a normal float32. Results that would be
// subnormal (x < −87.34) are flushed to 0, x > 88.72 gives +Inf, −Inf gives
// 0 and NaN gives NaN.
func Exp(dst, x []float32) {
	if len(x) == 0 {
		return
	}
	exp(dst[:len(x)], x)
}

// Exp32 returns e^x for one value with [Exp]'s accuracy and edge cases
// (x in (88, 88.72] is exact there), in pure Go: for scalar code, where a
// call into the SIMD kernels costs more than it saves.
func Exp32(x float32) float32 {
	v := [1]float32{x}
	expGeneric(v[:], v[:])
	return v[0]
}

// ExpSubMaxSum sets dst[i] = e^(x[i]−max) for i < len(x), as Exp does, and
// returns the sum of those values: the exponentials and normalizer of a
// softmax row whose maximum is max.
func ExpSubMaxSum(dst, x []float32, max float32) float32 {
	if len(x) == 0 {
		return 0
	}
	return expSubSum(dst[:len(x)], x, max)
}

// Softmax sets dst[:len(x)] to softmax(x): e^(x[i]−m) / Σ e^(x[j]−m), m
// the largest x[j]. It gives the bits of m := Max(x), s :=
// ExpSubMaxSum(dst, x, m), Scale(dst, dst, 1/s), in one call, which on
// attention's short rows saves the other two calls' overhead
// (BenchmarkSoftmaxRows). dst may be x itself.
func Softmax(dst, x []float32) {
	if len(x) == 0 {
		return
	}
	softmaxRows(dst[:len(x)], x, 1, len(x), len(x))
}

// SoftmaxRows sets rows rows of n elements of dst to Softmax of the same
// rows of x, bit for bit, in one call: row r is x[r·ld : r·ld+n], and
// dst's likewise; what lies between rows is neither read nor written.
// dst may be x itself. On attention's short rows a call for each costs up
// to a tenth of their time, and in place, rows that share a 64-byte line
// with the next (ld·4 not a multiple of 64) take about twice as long as
// rows that start on lines of their own: a row's last store holds up the
// next row's first load (BenchmarkSoftmaxRows).
func SoftmaxRows(dst, x []float32, rows, n, ld int) {
	if rows == 0 {
		return
	}
	if rows < 0 || n <= 0 || ld < n {
		panic(fmt.Sprintf("vec: SoftmaxRows of %d rows of %d, %d apart", rows, n, ld))
	}
	if end := (rows-1)*ld + n; len(x) < end || len(dst) < end {
		panic(fmt.Sprintf("vec: SoftmaxRows of %d rows of %d, %d apart, over %d and %d elements", rows, n, ld, len(x), len(dst)))
	}
	softmaxRows(dst, x, rows, n, ld)
}

// Max returns the largest element of x: −Inf if x is empty, NaN if x
// holds a NaN.
func Max(x []float32) float32 {
	if len(x) == 0 {
		return negInf
	}
	return maxOf(x)
}

// Sum returns Σ x[i] (0 for an empty x).
func Sum(x []float32) float32 {
	if len(x) == 0 {
		return 0
	}
	return sum(x)
}

// Dot returns Σ x[i]·y[i] over i < len(x); len(y) ≥ len(x).
func Dot(x, y []float32) float32 {
	if len(x) == 0 {
		return 0
	}
	return dot(x, y[:len(x)])
}

// SumSqDev returns Σ (x[i] − m)², the sum of squared deviations from m.
func SumSqDev(x []float32, m float32) float32 {
	if len(x) == 0 {
		return 0
	}
	return sumSqDev(x, m)
}

// MeanVar returns the mean of x and its biased variance Σ (x − mean)²/n,
// computed in two passes; both are NaN for an empty x.
func MeanVar(x []float32) (mean, variance float32) {
	n := float32(len(x))
	mean = Sum(x) / n
	return mean, SumSqDev(x, mean) / n
}

// Scale sets dst[i] = a·x[i] for i < len(x).
func Scale(dst, x []float32, a float32) {
	if len(x) == 0 {
		return
	}
	scale(dst[:len(x)], x, a)
}

// AddConst sets dst[i] = x[i] + c for i < len(x).
func AddConst(dst, x []float32, c float32) {
	if len(x) == 0 {
		return
	}
	addConst(dst[:len(x)], x, c)
}

// AXPY adds a·x to dst: dst[i] += a·x[i] for i < len(x) (fused multiply-add
// in the SIMD versions).
func AXPY(dst, x []float32, a float32) {
	if len(x) == 0 {
		return
	}
	axpy(dst[:len(x)], x, a)
}

// Add sets dst[i] = x[i] + y[i] for i < len(x).
func Add(dst, x, y []float32) {
	if len(x) == 0 {
		return
	}
	add(dst[:len(x)], x, y[:len(x)])
}

// Mul sets dst[i] = x[i]·y[i] for i < len(x).
func Mul(dst, x, y []float32) {
	if len(x) == 0 {
		return
	}
	mul(dst[:len(x)], x, y[:len(x)])
}

// MulDiff sets dst[i] = y[i]·(x[i] − c) for i < len(y): with c = ⟨x, y⟩ it
// is the backward of a softmax row y given the output gradient x.
func MulDiff(dst, y, x []float32, c float32) {
	if len(y) == 0 {
		return
	}
	mulDiff(dst[:len(y)], y, x[:len(y)], c)
}

// ReLU sets dst[i] = max(x[i], 0) for i < len(x), as a comparison with
// zero has it: 0 where x[i] < 0, else x[i] itself, so that −0 and NaN
// pass through unchanged.
func ReLU(dst, x []float32) {
	if len(x) == 0 {
		return
	}
	relu(dst[:len(x)], x)
}

// ReLUGrad sets dst[i] = dy[i] where y[i] > 0 and 0 elsewhere (NaN
// included), for i < len(y): ReLU's input gradient from its output y and
// its output gradient dy.
func ReLUGrad(dst, y, dy []float32) {
	if len(y) == 0 {
		return
	}
	reluGrad(dst[:len(y)], y, dy[:len(y)])
}

// Erf sets dst[i] = erf(x[i]) for i < len(x), with an absolute error below
// 1e-6: Abramowitz & Stegun 7.1.26, erf(z) = 1 − t·P(t)·e^(−z²) with
// t = 1/(1 + p·z), z = |x|, and the sign of x. erf(±Inf) = ±1, NaN gives NaN.
func Erf(dst, x []float32) {
	if len(x) == 0 {
		return
	}
	erf(dst[:len(x)], x)
}

// Erf32 returns erf(x) for one value as [Erf] does, in pure Go: for scalar
// code.
func Erf32(x float32) float32 {
	r := 1 - erfcGeneric(abs(x), Exp32(-x*x))
	if x < 0 {
		return -r
	}
	return r
}

// GELU sets dst[i] = x[i]·Φ(x[i]) for i < len(x), Φ the standard normal CDF:
// the exact (erf) GELU of PyTorch's nn.GELU(). Φ is computed as in [Erf]
// (|ΔΦ| < 1e-6), its lower tail Φ(x < 0) = erfc(|x|/√2)/2 without
// cancellation. GELU(+Inf) = +Inf; GELU(−Inf) and GELU(NaN) are NaN.
func GELU(dst, x []float32) {
	if len(x) == 0 {
		return
	}
	gelu(dst[:len(x)], nil, x, false)
}

// GELUDeriv sets dst[i] = GELU'(x[i]) = Φ(x[i]) + x[i]·φ(x[i]) for
// i < len(x), φ the standard normal density; ±Inf and NaN give NaN.
func GELUDeriv(dst, x []float32) {
	if len(x) == 0 {
		return
	}
	gelu(nil, dst[:len(x)], x, false)
}

// GELUAndDeriv sets dst to GELU(x) and deriv to GELU'(x) in one pass, as
// [GELU] and [GELUDeriv] do. dst and deriv must be different slices; either
// may be x.
func GELUAndDeriv(dst, deriv, x []float32) {
	if len(x) == 0 {
		return
	}
	gelu(dst[:len(x)], deriv[:len(x)], x, false)
}

// GELUAndDerivStreaming is [GELUAndDeriv] writing deriv with streaming
// (non-temporal) stores, which send it towards memory without first
// reading its cache lines in: for a slope that a training step reads back
// only in its backward pass, after the rest of the forward pass has
// pushed it out of cache anyway. The values are GELUAndDeriv's. Where deriv
// does not start on a vector boundary, or the processor lacks AVX2, the
// stores are ordinary. Before another goroutine reads deriv, the writer
// calls [StoreFence].
func GELUAndDerivStreaming(dst, deriv, x []float32) {
	if len(x) == 0 {
		return
	}
	gelu(dst[:len(x)], deriv[:len(x)], x, true)
}

// CopyStreaming copies src into dst, as many floats as the shorter holds,
// as copy does, writing dst with streaming (non-temporal) stores where it
// starts on a vector boundary: for a copy kept for later, which the
// caches would not hold until then. Before another goroutine reads dst,
// the writer calls [StoreFence].
func CopyStreaming(dst, src []float32) {
	n := min(len(dst), len(src))
	done := copyStream(dst[:n], src[:n])
	copy(dst[done:n], src[done:n])
}

// StoreFence orders this goroutine's streaming stores (those of
// [GELUAndDerivStreaming], [CopyStreaming] and package blas's streamed
// conversions) before its later stores: a goroutine that synchronizes
// with this one after it sees them.
func StoreFence() { fence() }

// LayerNormRow sets y[j] = (x[j] − mean)·rstd·w[j] + b[j] for j < len(x):
// one normalized row of LayerNorm with weight w and bias b.
func LayerNormRow(y, x, w, b []float32, mean, rstd float32) {
	if len(x) == 0 {
		return
	}
	n := len(x)
	lnRow(y[:n], x, w[:n], b[:n], mean, rstd)
}

// LayerNormGradSums returns, over j < len(x), sg = Σ g[j] and
// sgx = Σ g[j]·x̂[j] with g = dy·w and x̂ = (x − mean)·rstd: the two row
// sums of the LayerNorm input gradient.
func LayerNormGradSums(x, dy, w []float32, mean, rstd float32) (sg, sgx float32) {
	if len(x) == 0 {
		return 0, 0
	}
	n := len(x)
	return lnGradSums(x, dy[:n], w[:n], mean, rstd)
}

// LayerNormGradRow sets dx[j] = rstd·(dy[j]·w[j] − a − x̂[j]·c) for
// j < len(x), x̂ = (x − mean)·rstd: the LayerNorm input gradient of a row,
// given a = sg/n and c = sgx/n from [LayerNormGradSums]. dx may be x or dy.
func LayerNormGradRow(dx, x, dy, w []float32, mean, rstd, a, c float32) {
	if len(x) == 0 {
		return
	}
	n := len(x)
	lnGradRow(dx[:n], x, dy[:n], w[:n], mean, rstd, a, c)
}

// LayerNormGradWeightAcc adds one row's LayerNorm weight gradient to acc:
// acc[j] += float64(dy[j]·x̂[j]) for j < len(x), x̂ = (x − mean)·rstd, the
// product rounded to float32 and the sum kept in float64.
func LayerNormGradWeightAcc(acc []float64, x, dy []float32, mean, rstd float32) {
	if len(x) == 0 {
		return
	}
	n := len(x)
	lnGradWeight(acc[:n], x, dy[:n], mean, rstd)
}

// AdamWCoef are the per-step constants of [AdamW].
type AdamWCoef struct {
	Beta1, OneMinusBeta1 float32 // β1 and 1 − β1
	Beta2, OneMinusBeta2 float32 // β2 and 1 − β2
	Eps                  float32 // added to the bias-corrected √v
	InvSqrtBC2           float32 // 1/√(1 − β2^t)
	DecayMul             float32 // 1 − η·λ, the decoupled weight decay
	StepSize             float32 // η/(1 − β1^t)
	GradScale            float32 // the gradient's factor: 1, or a clipping coefficient
}

// AdamW applies one AdamW update to p, with the moments m and v, from the
// gradient g scaled by GradScale, for i < len(p) (g, m and v hold at least
// len(p) values; g is only read):
//
//	g ← GradScale·g
//	m ← β1·m + (1−β1)·g
//	v ← β2·v + ((1−β2)·g)·g
//	p ← p·DecayMul − (StepSize·m) / (√v·InvSqrtBC2 + Eps)
//
// Every step is one float32 operation rounded to nearest, in this order,
// with a correctly rounded square root and a true division and no fused
// multiply-adds, so all implementations give bit-identical results, equal
// to the scalar formula evaluated one operation at a time.
func AdamW(p, g, m, v []float32, c AdamWCoef) {
	if len(p) == 0 {
		return
	}
	n := len(p)
	adamw(p, g[:n], m[:n], v[:n], &c)
}

// SumSquares64 returns Σ x[i]² in float64. Each square is exact; the sum
// is kept in four running sums, sum j adding x[j], x[j+4], x[j+8], … in
// order and sum 0 then the elements after the last whole group of four,
// and returned as (s0 + s1) + (s2 + s3). Unlike the float32 sums above,
// the order is fixed: every implementation gives the same bits.
func SumSquares64(x []float32) float64 {
	if len(x) == 0 {
		return 0
	}
	return sumSquares64(x)
}

// SumSquares64x4 returns SumSquares64 of each of four slices of one
// length, bit for bit. Each of SumSquares64's additions waits on the one
// before it, so one sum at a time leaves the adder idle between them;
// four side by side keep it busy, and the pass is as fast as memory. It
// panics if the lengths differ.
func SumSquares64x4(x0, x1, x2, x3 []float32) [4]float64 {
	n := len(x0)
	if len(x1) != n || len(x2) != n || len(x3) != n {
		panic(fmt.Sprintf("vec: SumSquares64x4 of slices of %d, %d, %d and %d elements", n, len(x1), len(x2), len(x3)))
	}
	if n == 0 {
		return [4]float64{}
	}
	return sumSquares64x4(&[4][]float32{x0, x1, x2, x3})
}
