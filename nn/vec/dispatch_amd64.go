//go:build amd64 && !purego

package vec

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// level is the kernel set in use, from the CPU's features.
var level = bestLevel()

// bestLevel picks AVX-512 when the CPU and OS support AVX-512 F, BW, DQ
// and VL, else AVX2 with FMA, else the pure-Go kernels.
func bestLevel() int {
	x := cpu.X86
	switch {
	case x.HasAVX512F && x.HasAVX512BW && x.HasAVX512DQ && x.HasAVX512VL && x.HasAVX2 && x.HasFMA:
		return levelAVX512
	case x.HasAVX2 && x.HasFMA:
		return levelAVX2
	}
	return levelGeneric
}

// Assembly kernels; each takes n ≥ 1 elements.

//go:noescape
func expAVX512(dst, x *float32, n int)

//go:noescape
func expSubSumAVX512(dst, x *float32, n int, m float32) float32

//go:noescape
func softmaxAVX512(dst, x *float32, n, rows, ld int)

//go:noescape
func maxAVX512(x *float32, n int) float32

//go:noescape
func sumAVX512(x *float32, n int) float32

//go:noescape
func dotAVX512(x, y *float32, n int) float32

//go:noescape
func sumSqDevAVX512(x *float32, n int, m float32) float32

//go:noescape
func scaleAVX512(dst, x *float32, n int, a float32)

//go:noescape
func addConstAVX512(dst, x *float32, n int, c float32)

//go:noescape
func axpyAVX512(dst, x *float32, n int, a float32)

//go:noescape
func mulAVX512(dst, x, y *float32, n int)

//go:noescape
func addAVX512(dst, x, y *float32, n int)

//go:noescape
func mulDiffAVX512(dst, y, x *float32, n int, c float32)

// reluAVX512 sets dst[i] = y[i] where x[i] is not below 0, else 0 (relu
// passes x as y); reluGradAVX512 sets dst[i] = y[i] where x[i] > 0, else 0.
//
//go:noescape
func reluAVX512(dst, x, y *float32, n int)

//go:noescape
func reluGradAVX512(dst, x, y *float32, n int)

//go:noescape
func erfAVX512(dst, x *float32, n int)

// geluAVX512 skips dst or deriv when it is nil.
//
//go:noescape
func geluAVX512(dst, deriv, x *float32, n int, stream bool)

//go:noescape
func lnRowAVX512(y, x, w, b *float32, n int, mean, rstd float32)

//go:noescape
func lnGradSumsAVX512(x, dy, w *float32, n int, mean, rstd float32) (sg, sgx float32)

//go:noescape
func lnGradRowAVX512(dx, x, dy, w *float32, n int, mean, rstd, a, c float32)

//go:noescape
func lnGradWeightAVX512(acc *float64, x, dy *float32, n int, mean, rstd float32)

//go:noescape
func adamwAVX512(p, grad, m, v *float32, n int, c *AdamWCoef)

//go:noescape
func expAVX2(dst, x *float32, n int)

//go:noescape
func expSubSumAVX2(dst, x *float32, n int, m float32) float32

//go:noescape
func maxAVX2(x *float32, n int) float32

//go:noescape
func sumAVX2(x *float32, n int) float32

//go:noescape
func dotAVX2(x, y *float32, n int) float32

//go:noescape
func sumSqDevAVX2(x *float32, n int, m float32) float32

//go:noescape
func scaleAVX2(dst, x *float32, n int, a float32)

//go:noescape
func addConstAVX2(dst, x *float32, n int, c float32)

//go:noescape
func axpyAVX2(dst, x *float32, n int, a float32)

//go:noescape
func mulAVX2(dst, x, y *float32, n int)

//go:noescape
func addAVX2(dst, x, y *float32, n int)

//go:noescape
func mulDiffAVX2(dst, y, x *float32, n int, c float32)

// reluAVX2 sets dst[i] = y[i] where x[i] is not below 0, else 0 (relu
// passes x as y); reluGradAVX2 sets dst[i] = y[i] where x[i] > 0, else 0.
//
//go:noescape
func reluAVX2(dst, x, y *float32, n int)

//go:noescape
func reluGradAVX2(dst, x, y *float32, n int)

//go:noescape
func erfAVX2(dst, x *float32, n int)

// geluAVX2 skips dst or deriv when it is nil.
//
//go:noescape
func geluAVX2(dst, deriv, x *float32, n int, stream bool)

// fence is SFENCE (SSE, and so on every processor of both kernel sets).
func fence()

//go:noescape
func lnRowAVX2(y, x, w, b *float32, n int, mean, rstd float32)

//go:noescape
func lnGradSumsAVX2(x, dy, w *float32, n int, mean, rstd float32) (sg, sgx float32)

//go:noescape
func lnGradRowAVX2(dx, x, dy, w *float32, n int, mean, rstd, a, c float32)

//go:noescape
func lnGradWeightAVX2(acc *float64, x, dy *float32, n int, mean, rstd float32)

//go:noescape
func adamwAVX2(p, grad, m, v *float32, n int, c *AdamWCoef)

// sumSquares64AVX2 serves both SIMD levels: SumSquares64's four running
// sums are the lanes of one 256-bit register.
//
//go:noescape
func sumSquares64AVX2(x *float32, n int) float64

// sumSquares64x4AVX2 runs SumSquares64's four running sums of each of
// four slices of n elements, n a multiple of 4, side by side, and stores
// them in sums: slice i's sum j in sums[4i+j].
//
//go:noescape
func sumSquares64x4AVX2(x *[4]*float32, n int, sums *[16]float64)

// The dispatchers below take non-empty slices, already cut to a common length.

func exp(dst, x []float32) {
	switch level {
	case levelAVX512:
		expAVX512(&dst[0], &x[0], len(x))
	case levelAVX2:
		expAVX2(&dst[0], &x[0], len(x))
	default:
		expGeneric(dst, x)
	}
}

func expSubSum(dst, x []float32, m float32) float32 {
	switch level {
	case levelAVX512:
		return expSubSumAVX512(&dst[0], &x[0], len(x), m)
	case levelAVX2:
		return expSubSumAVX2(&dst[0], &x[0], len(x), m)
	}
	return expSubSumGeneric(dst, x, m)
}

// softmaxRows is SoftmaxRows for rows ≥ 1 and n ≥ 1, its slices long
// enough.
func softmaxRows(dst, x []float32, rows, n, ld int) {
	if level == levelAVX512 {
		softmaxAVX512(&dst[0], &x[0], n, rows, ld)
		return
	}
	softmaxRowsOf(dst, x, rows, n, ld)
}

func maxOf(x []float32) float32 {
	switch level {
	case levelAVX512:
		return maxAVX512(&x[0], len(x))
	case levelAVX2:
		return maxAVX2(&x[0], len(x))
	}
	return maxGeneric(x)
}

func sum(x []float32) float32 {
	switch level {
	case levelAVX512:
		return sumAVX512(&x[0], len(x))
	case levelAVX2:
		return sumAVX2(&x[0], len(x))
	}
	return sumGeneric(x)
}

func dot(x, y []float32) float32 {
	switch level {
	case levelAVX512:
		return dotAVX512(&x[0], &y[0], len(x))
	case levelAVX2:
		return dotAVX2(&x[0], &y[0], len(x))
	}
	return dotGeneric(x, y)
}

func sumSqDev(x []float32, m float32) float32 {
	switch level {
	case levelAVX512:
		return sumSqDevAVX512(&x[0], len(x), m)
	case levelAVX2:
		return sumSqDevAVX2(&x[0], len(x), m)
	}
	return sumSqDevGeneric(x, m)
}

func scale(dst, x []float32, a float32) {
	switch level {
	case levelAVX512:
		scaleAVX512(&dst[0], &x[0], len(x), a)
	case levelAVX2:
		scaleAVX2(&dst[0], &x[0], len(x), a)
	default:
		scaleGeneric(dst, x, a)
	}
}

func addConst(dst, x []float32, c float32) {
	switch level {
	case levelAVX512:
		addConstAVX512(&dst[0], &x[0], len(x), c)
	case levelAVX2:
		addConstAVX2(&dst[0], &x[0], len(x), c)
	default:
		addConstGeneric(dst, x, c)
	}
}

func axpy(dst, x []float32, a float32) {
	switch level {
	case levelAVX512:
		axpyAVX512(&dst[0], &x[0], len(x), a)
	case levelAVX2:
		axpyAVX2(&dst[0], &x[0], len(x), a)
	default:
		axpyGeneric(dst, x, a)
	}
}

func add(dst, x, y []float32) {
	switch level {
	case levelAVX512:
		addAVX512(&dst[0], &x[0], &y[0], len(x))
	case levelAVX2:
		addAVX2(&dst[0], &x[0], &y[0], len(x))
	default:
		addGeneric(dst, x, y)
	}
}

func mul(dst, x, y []float32) {
	switch level {
	case levelAVX512:
		mulAVX512(&dst[0], &x[0], &y[0], len(x))
	case levelAVX2:
		mulAVX2(&dst[0], &x[0], &y[0], len(x))
	default:
		mulGeneric(dst, x, y)
	}
}

func relu(dst, x []float32) {
	switch level {
	case levelAVX512:
		reluAVX512(&dst[0], &x[0], &x[0], len(x))
	case levelAVX2:
		reluAVX2(&dst[0], &x[0], &x[0], len(x))
	default:
		reluGeneric(dst, x)
	}
}

func reluGrad(dst, y, dy []float32) {
	switch level {
	case levelAVX512:
		reluGradAVX512(&dst[0], &y[0], &dy[0], len(y))
	case levelAVX2:
		reluGradAVX2(&dst[0], &y[0], &dy[0], len(y))
	default:
		reluGradGeneric(dst, y, dy)
	}
}

func mulDiff(dst, y, x []float32, c float32) {
	switch level {
	case levelAVX512:
		mulDiffAVX512(&dst[0], &y[0], &x[0], len(y), c)
	case levelAVX2:
		mulDiffAVX2(&dst[0], &y[0], &x[0], len(y), c)
	default:
		mulDiffGeneric(dst, y, x, c)
	}
}

func erf(dst, x []float32) {
	switch level {
	case levelAVX512:
		erfAVX512(&dst[0], &x[0], len(x))
	case levelAVX2:
		erfAVX2(&dst[0], &x[0], len(x))
	default:
		erfGeneric(dst, x)
	}
}

// gelu sets dst = GELU(x) unless dst is nil and deriv = GELU'(x) unless
// deriv is nil, deriv with streaming stores where stream is set and the
// kernels take them.
func gelu(dst, deriv, x []float32, stream bool) {
	if level == levelGeneric {
		geluGeneric(dst, deriv, x)
		return
	}
	var d, s *float32
	if dst != nil {
		d = &dst[0]
	}
	if deriv != nil {
		s = &deriv[0]
	}
	if level == levelAVX512 {
		geluAVX512(d, s, &x[0], len(x), stream)
	} else {
		geluAVX2(d, s, &x[0], len(x), stream)
	}
}

func lnRow(y, x, w, b []float32, mean, rstd float32) {
	switch level {
	case levelAVX512:
		lnRowAVX512(&y[0], &x[0], &w[0], &b[0], len(x), mean, rstd)
	case levelAVX2:
		lnRowAVX2(&y[0], &x[0], &w[0], &b[0], len(x), mean, rstd)
	default:
		lnRowGeneric(y, x, w, b, mean, rstd)
	}
}

func lnGradSums(x, dy, w []float32, mean, rstd float32) (sg, sgx float32) {
	switch level {
	case levelAVX512:
		return lnGradSumsAVX512(&x[0], &dy[0], &w[0], len(x), mean, rstd)
	case levelAVX2:
		return lnGradSumsAVX2(&x[0], &dy[0], &w[0], len(x), mean, rstd)
	}
	return lnGradSumsGeneric(x, dy, w, mean, rstd)
}

func lnGradRow(dx, x, dy, w []float32, mean, rstd, a, c float32) {
	switch level {
	case levelAVX512:
		lnGradRowAVX512(&dx[0], &x[0], &dy[0], &w[0], len(x), mean, rstd, a, c)
	case levelAVX2:
		lnGradRowAVX2(&dx[0], &x[0], &dy[0], &w[0], len(x), mean, rstd, a, c)
	default:
		lnGradRowGeneric(dx, x, dy, w, mean, rstd, a, c)
	}
}

func lnGradWeight(acc []float64, x, dy []float32, mean, rstd float32) {
	switch level {
	case levelAVX512:
		lnGradWeightAVX512(&acc[0], &x[0], &dy[0], len(x), mean, rstd)
	case levelAVX2:
		lnGradWeightAVX2(&acc[0], &x[0], &dy[0], len(x), mean, rstd)
	default:
		lnGradWeightGeneric(acc, x, dy, mean, rstd)
	}
}

func adamw(p, g, m, v []float32, c *AdamWCoef) {
	switch level {
	case levelAVX512:
		adamwAVX512(&p[0], &g[0], &m[0], &v[0], len(p), c)
	case levelAVX2:
		adamwAVX2(&p[0], &g[0], &m[0], &v[0], len(p), c)
	default:
		adamwGeneric(p, g, m, v, c)
	}
}

func sumSquares64(x []float32) float64 {
	if level >= levelAVX2 {
		return sumSquares64AVX2(&x[0], len(x))
	}
	return sumSquares64Generic(x)
}

func sumSquares64x4(x *[4][]float32) [4]float64 {
	if level < levelAVX2 {
		return sumSquares64x4Generic(x)
	}
	whole := len(x[0]) &^ 3
	var out [4]float64
	var sums [16]float64
	sumSquares64x4AVX2(&[4]*float32{&x[0][0], &x[1][0], &x[2][0], &x[3][0]}, whole, &sums)
	for i := range x {
		out[i] = finishSumSquares([4]float64(sums[4*i:4*i+4]), x[i][whole:])
	}
	return out
}

// availableLevels lists the kernel sets this CPU can run, best last.
func availableLevels() []int {
	l := []int{levelGeneric}
	if b := bestLevel(); b >= levelAVX2 {
		l = append(l, levelAVX2)
		if b == levelAVX512 {
			l = append(l, levelAVX512)
		}
	}
	return l
}

//go:noescape
func copyStreamAVX512(dst, src *float32, n int)

//go:noescape
func copyStreamAVX2(dst, src *float32, n int)

// copyStream copies the first floats of src into dst with streaming
// stores, as many whole vectors as the kernels take from where dst starts
// (none if it is not on a vector boundary), and returns how many.
func copyStream(dst, src []float32) int {
	if len(dst) == 0 {
		return 0
	}
	at := uintptr(unsafe.Pointer(&dst[0]))
	switch {
	case level == levelAVX512 && at%64 == 0 && len(dst) >= 16:
		n := len(dst) &^ 15
		copyStreamAVX512(&dst[0], &src[0], n)
		return n
	case level == levelAVX2 && at%32 == 0 && len(dst) >= 8:
		n := len(dst) &^ 7
		copyStreamAVX2(&dst[0], &src[0], n)
		return n
	}
	return 0
}
