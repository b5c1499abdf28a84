package vec

import "math"

// Pure-Go kernels: the fallback on CPUs and architectures without the SIMD
// versions, and the reference the SIMD versions are tested against. Callers
// pass non-empty slices of equal length.

// float32 exp: x = k·ln2 + r with |r| ≤ ln2/2 (Cody–Waite split of ln2, so
// k·ln2Hi is exact), e^r by its degree-7 Taylor polynomial (truncation
// error below 6e-9), then scaled by 2^k through the exponent bits.
const (
	expLog2e = 1.44269504088896341
	expLn2Hi = 0.693359375
	expLn2Lo = -2.12194440054690583e-4
	// expMin is the least float32 at or above ln 2⁻¹²⁶ = −87.3365447…:
	// e^x is subnormal below ln 2⁻¹²⁶, and the float32 nearest to it,
	// −87.33654785, lies below it.
	expMin = -87.33654022216797
	// Above expFastMax, k = round(x/ln2) can reach 128.
	expFastMax   = 88
	expRound     = 12582912 // 1.5·2²³
	expRoundBits = 0x4b400000
)

var negInf = float32(math.Inf(-1))

func expGeneric(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		if !(v >= expMin && v <= expFastMax) { // also true for NaN
			dst[i] = expEdge(v)
			continue
		}
		// Adding 1.5·2²³ rounds v/ln2 to the integer k and leaves k in the
		// low mantissa bits of t.
		t := v*expLog2e + expRound
		kf := t - expRound
		r := v - kf*expLn2Hi - kf*expLn2Lo
		r2 := r * r // Estrin's scheme: a shorter dependency chain than Horner's
		q := (1.0/2 + r*(1.0/6)) + r2*((1.0/24+r*(1.0/120))+r2*(1.0/720+r*(1.0/5040)))
		p := 1 + (r + r2*q)
		dst[i] = p * math.Float32frombits((math.Float32bits(t)-expRoundBits+127)<<23)
	}
}

// expEdge is e^x outside [expMin, expFastMax], where 2^k would need the
// exponent 128 or the result is not a normal float32.
//
//go:noinline
func expEdge(x float32) float32 {
	if x < expMin {
		return 0
	}
	return float32(math.Exp(float64(x))) // NaN, +Inf, or in (88, 88.73]
}

func expSubSumGeneric(dst, x []float32, m float32) float32 {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = v - m
	}
	expGeneric(dst, dst)
	return sumGeneric(dst)
}

func maxGeneric(x []float32) float32 {
	m := negInf
	for _, v := range x {
		if v != v {
			return v
		}
		if v > m {
			m = v
		}
	}
	return m
}

func sumGeneric(x []float32) float32 {
	var a0, a1, a2, a3 float32
	for ; len(x) >= 4; x = x[4:] {
		a0 += x[0]
		a1 += x[1]
		a2 += x[2]
		a3 += x[3]
	}
	for _, v := range x {
		a0 += v
	}
	return (a0 + a1) + (a2 + a3)
}

func dotGeneric(x, y []float32) float32 {
	var a0, a1, a2, a3 float32
	y = y[:len(x)]
	for ; len(x) >= 4; x, y = x[4:], y[4:] {
		a0 += x[0] * y[0]
		a1 += x[1] * y[1]
		a2 += x[2] * y[2]
		a3 += x[3] * y[3]
	}
	for i, v := range x {
		a0 += v * y[i]
	}
	return (a0 + a1) + (a2 + a3)
}

func sumSqDevGeneric(x []float32, m float32) float32 {
	var a0, a1 float32
	for ; len(x) >= 2; x = x[2:] {
		d0, d1 := x[0]-m, x[1]-m
		a0 += d0 * d0
		a1 += d1 * d1
	}
	for _, v := range x {
		a0 += (v - m) * (v - m)
	}
	return a0 + a1
}

func scaleGeneric(dst, x []float32, a float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = a * v
	}
}

func addConstGeneric(dst, x []float32, c float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = v + c
	}
}

func axpyGeneric(dst, x []float32, a float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] += a * v
	}
}

func addGeneric(dst, x, y []float32) {
	dst, y = dst[:len(x)], y[:len(x)]
	for i, v := range x {
		dst[i] = v + y[i]
	}
}

func mulGeneric(dst, x, y []float32) {
	dst, y = dst[:len(x)], y[:len(x)]
	for i, v := range x {
		dst[i] = v * y[i]
	}
}

func reluGeneric(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		if v < 0 {
			v = 0
		}
		dst[i] = v
	}
}

func reluGradGeneric(dst, y, dy []float32) {
	dst, dy = dst[:len(y)], dy[:len(y)]
	for i, v := range y {
		g := dy[i]
		if !(v > 0) {
			g = 0
		}
		dst[i] = g
	}
}

func mulDiffGeneric(dst, y, x []float32, c float32) {
	dst, x = dst[:len(y)], x[:len(y)]
	for i, v := range y {
		dst[i] = v * (x[i] - c)
	}
}

// Abramowitz & Stegun 7.1.26: erfc(z) ≈ t·P(t)·e^(−z²), t = 1/(1 + p·z),
// z ≥ 0, with |error| ≤ 1.5e-7.
const (
	erfP  = 0.3275911
	erfA1 = 0.254829592
	erfA2 = -0.284496736
	erfA3 = 1.421413741
	erfA4 = -1.453152027
	erfA5 = 1.061405429
)

const (
	invSqrt2   = 0.70710678118654752440
	invSqrt2Pi = 0.39894228040143267794
)

// erfcGeneric returns erfc(z) for z ≥ 0, given expNegZ2 = e^(−z²).
func erfcGeneric(z, expNegZ2 float32) float32 {
	t := 1 / (1 + erfP*z)
	return t * (erfA1 + t*(erfA2+t*(erfA3+t*(erfA4+t*erfA5)))) * expNegZ2
}

// chunk is the work unit of the kernels that need scratch: small enough for
// it to stay on the stack and in L1.
const chunk = 256

func erfGeneric(dst, x []float32) {
	dst = dst[:len(x)]
	var e [chunk]float32
	for lo := 0; lo < len(x); lo += chunk {
		xc := x[lo:min(lo+chunk, len(x))]
		ec := e[:len(xc)]
		for i, v := range xc {
			ec[i] = -v * v
		}
		expGeneric(ec, ec)
		for i, v := range xc {
			r := 1 - erfcGeneric(abs(v), ec[i])
			if v < 0 {
				r = -r
			}
			dst[lo+i] = r
		}
	}
}

// geluGeneric sets dst = GELU(x) unless dst is nil and deriv = GELU'(x)
// unless deriv is nil.
func geluGeneric(dst, deriv, x []float32) {
	var e [chunk]float32
	for lo := 0; lo < len(x); lo += chunk {
		xc := x[lo:min(lo+chunk, len(x))]
		ec := e[:len(xc)]
		for i, v := range xc {
			ec[i] = -0.5 * v * v
		}
		expGeneric(ec, ec)
		for i, v := range xc {
			q := 0.5 * erfcGeneric(abs(v)*invSqrt2, ec[i]) // Φ(−|v|)
			if v >= 0 {
				q = 1 - q
			}
			if dst != nil {
				dst[lo+i] = v * q
			}
			if deriv != nil {
				deriv[lo+i] = q + v*ec[i]*invSqrt2Pi
			}
		}
	}
}

func abs(x float32) float32 {
	return math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
}

func lnRowGeneric(y, x, w, b []float32, mean, rstd float32) {
	y, w, b = y[:len(x)], w[:len(x)], b[:len(x)]
	for j, v := range x {
		y[j] = (v-mean)*rstd*w[j] + b[j]
	}
}

func lnGradSumsGeneric(x, dy, w []float32, mean, rstd float32) (sg, sgx float32) {
	dy, w = dy[:len(x)], w[:len(x)]
	var sg1, sgx1 float32
	j := 0
	for ; j+1 < len(x); j += 2 {
		g0, g1 := dy[j]*w[j], dy[j+1]*w[j+1]
		sg += g0
		sg1 += g1
		sgx += g0 * ((x[j] - mean) * rstd)
		sgx1 += g1 * ((x[j+1] - mean) * rstd)
	}
	if j < len(x) {
		g := dy[j] * w[j]
		sg += g
		sgx += g * ((x[j] - mean) * rstd)
	}
	return sg + sg1, sgx + sgx1
}

func lnGradRowGeneric(dx, x, dy, w []float32, mean, rstd, a, c float32) {
	dx, dy, w = dx[:len(x)], dy[:len(x)], w[:len(x)]
	for j, v := range x {
		dx[j] = rstd * (dy[j]*w[j] - a - (v-mean)*rstd*c)
	}
}

func lnGradWeightGeneric(acc []float64, x, dy []float32, mean, rstd float32) {
	acc, dy = acc[:len(x)], dy[:len(x)]
	for j, v := range x {
		acc[j] += float64(dy[j] * ((v - mean) * rstd))
	}
}

// adamwGeneric is the AdamW update one rounded operation at a time: the
// conversions stop the compiler from fusing a multiply and an add.
func adamwGeneric(p, g, m, v []float32, c *AdamWCoef) {
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	for i := range p {
		gi := float32(g[i] * c.GradScale)
		mi := float32(c.Beta1*m[i]) + float32(c.OneMinusBeta1*gi)
		vi := float32(c.Beta2*v[i]) + float32(float32(c.OneMinusBeta2*gi)*gi)
		m[i], v[i] = mi, vi
		denom := float32(float32(math.Sqrt(float64(vi)))*c.InvSqrtBC2) + c.Eps
		p[i] = float32(p[i]*c.DecayMul) - float32(c.StepSize*mi)/denom
	}
}

// sumSquares64Generic is SumSquares64 in Go.
func sumSquares64Generic(x []float32) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		a, b, c, d := float64(x[i]), float64(x[i+1]), float64(x[i+2]), float64(x[i+3])
		s0 += a * a
		s1 += b * b
		s2 += c * c
		s3 += d * d
	}
	return finishSumSquares([4]float64{s0, s1, s2, s3}, x[i:])
}

// finishSumSquares ends SumSquares64 from its four running sums s after
// the last whole group of four: the squares of the rest (fewer than four)
// go into s[0], and the result is (s0 + s1) + (s2 + s3).
func finishSumSquares(s [4]float64, rest []float32) float64 {
	for _, v := range rest {
		s[0] += float64(v) * float64(v)
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

// sumSquares64x4Generic is SumSquares64x4 in Go, one slice after another.
func sumSquares64x4Generic(x *[4][]float32) [4]float64 {
	var s [4]float64
	for i := range x {
		s[i] = sumSquares64Generic(x[i])
	}
	return s
}

// softmaxRowsOf is SoftmaxRows as each row's three passes, each in the
// kernels in use.
func softmaxRowsOf(dst, x []float32, rows, n, ld int) {
	for r := range rows {
		d, s := dst[r*ld:r*ld+n], x[r*ld:r*ld+n]
		scale(d, d, 1/expSubSum(d, s, maxOf(s)))
	}
}
