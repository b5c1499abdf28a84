package ops

import "math"

// float32 exp: x = k·ln2 + r with |r| ≤ ln2/2 (Cody–Waite split of ln2, so
// k·ln2Hi is exact), exp(r) by its degree-7 Taylor polynomial (truncation
// error below 6e-9), then scaled by 2^k through the exponent bits.
const (
	expLog2e32 = 1.44269504088896341
	expLn2Hi32 = 0.693359375
	expLn2Lo32 = -2.12194440054690583e-4
	expMax32   = 88.72283935546875     // exp overflows float32 above this
	expMin32   = -87.33654475055310898 // ln 2⁻¹²⁶: exp is subnormal below this
	// Above expFastMax32, k = round(x/ln2) can reach 128.
	expFastMax32 = 88
	expRound32   = 12582912 // 1.5·2²³
	expRoundBits = 0x4b400000
)

// FastExp32 returns e^x in float32 with a relative error below 2e-7 over
// the normal range. Results that would be subnormal (x < −87.34) are
// flushed to 0; x > 88.72 gives +Inf; NaN gives NaN. Loops should call
// expSlice32, which does the same without a call per element.
func FastExp32(x float32) float32 {
	v := [1]float32{x}
	expSlice32(v[:], v[:])
	return v[0]
}

// expSlice32 sets out[i] = FastExp32(x[i]); out may be x itself.
func expSlice32(x, out []float32) {
	out = out[:len(x)]
	for i, v := range x {
		if !(v >= expMin32 && v <= expFastMax32) { // also true for NaN
			out[i] = exp32Edge(v)
			continue
		}
		// Adding 1.5·2²³ rounds v/ln2 to the integer k and leaves k in the
		// low mantissa bits of t.
		t := v*expLog2e32 + expRound32
		kf := t - expRound32
		r := v - kf*expLn2Hi32 - kf*expLn2Lo32
		r2 := r * r // Estrin's scheme: a shorter dependency chain than Horner's
		q := (1.0/2 + r*(1.0/6)) + r2*((1.0/24+r*(1.0/120))+r2*(1.0/720+r*(1.0/5040)))
		p := 1 + (r + r2*q)
		out[i] = p * math.Float32frombits((math.Float32bits(t)-expRoundBits+127)<<23)
	}
}

// exp32Edge is FastExp32 outside [expMin32, expFastMax32], where 2^k would
// need the exponent 128 or the result is not a normal float32.
//
//go:noinline
func exp32Edge(x float32) float32 {
	if x < expMin32 {
		return 0
	}
	return float32(math.Exp(float64(x))) // NaN, +Inf, or in (88, 88.73]
}

// Abramowitz & Stegun 7.1.26: erfc(z) ≈ t·P(t)·exp(−z²), t = 1/(1 + p·z),
// z ≥ 0, with |error| ≤ 1.5e-7.
const (
	erfP  = 0.3275911
	erfA1 = 0.254829592
	erfA2 = -0.284496736
	erfA3 = 1.421413741
	erfA4 = -1.453152027
	erfA5 = 1.061405429
)

// halfErfc32 returns erfc(z)/2 for z ≥ 0, given expNegZ2 = exp(−z²).
func halfErfc32(z, expNegZ2 float32) float32 {
	t := 1 / (1 + erfP*z)
	return 0.5 * t * (erfA1 + t*(erfA2+t*(erfA3+t*(erfA4+t*erfA5)))) * expNegZ2
}

// FastErf32 returns erf(x) in float32 with an absolute error below 1e-6
// (Abramowitz & Stegun 7.1.26 with FastExp32).
func FastErf32(x float32) float32 {
	z := abs32(x)
	e := 1 - 2*halfErfc32(z, FastExp32(-z*z))
	if x < 0 {
		return -e
	}
	return e
}

const (
	invSqrt2   = 0.70710678118654752440
	invSqrt2Pi = 0.39894228040143267794
)

// normal32 sets cdf[i] = Φ(x[i]), the standard normal CDF, and e[i] =
// exp(−x[i]²/2) = √(2π)·φ(x[i]), for len(x) ≤ len(cdf), len(e): |ΔΦ| < 1e-6,
// and the lower tail Φ(x < 0) is computed without cancellation.
func normal32(x, cdf, e []float32) {
	e, cdf = e[:len(x)], cdf[:len(x)]
	for i, v := range x {
		e[i] = -0.5 * v * v
	}
	expSlice32(e, e)
	for i, v := range x {
		q := halfErfc32(abs32(v)*invSqrt2, e[i]) // Φ(−|v|)
		if v >= 0 {
			q = 1 - q
		}
		cdf[i] = q
	}
}

// normal64 returns Φ(x) and φ(x) in float64 from the math package.
func normal64(x float64) (cdf, pdf float64) {
	return 0.5 * math.Erfc(-x*invSqrt2), math.Exp(-0.5*x*x) * invSqrt2Pi
}

func abs32(x float32) float32 {
	return math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
}

// expShift sets out[i] = e^(x[i]−shift) and returns the sum of the results;
// out may alias x. float32 uses FastExp32, float64 math.Exp.
func expShift[T Float](x, out []T, shift T) float64 {
	switch xs := any(x).(type) {
	case []float32:
		os := any(out).([]float32)[:len(xs)]
		s := float32(shift)
		for i, v := range xs {
			os[i] = v - s
		}
		expSlice32(os, os)
		return sumF64(os)
	case []float64:
		os := any(out).([]float64)[:len(xs)]
		s := float64(shift)
		var a float64
		for i, v := range xs {
			os[i] = math.Exp(v - s)
			a += os[i]
		}
		return a
	}
	return 0
}

// sumExpShift returns Σ e^(x[i]−shift) without storing the terms.
func sumExpShift[T Float](x []T, shift T) float64 {
	switch xs := any(x).(type) {
	case []float32:
		var buf [256]float32
		a := 0.0
		for lo := 0; lo < len(xs); lo += len(buf) {
			chunk := xs[lo:min(lo+len(buf), len(xs))]
			a += expShift(chunk, buf[:len(chunk)], float32(shift))
		}
		return a
	case []float64:
		s := float64(shift)
		var a float64
		for _, v := range xs {
			a += math.Exp(v - s)
		}
		return a
	}
	return 0
}
