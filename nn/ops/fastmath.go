package ops

import (
	"math"

	"github.com/vit-train/vit-train/nn/vec"
)

// FastExp32 returns e^x in float32 with a relative error below 2e-7 over
// the normal range. Results that would be subnormal (x < −87.34) are
// flushed to 0; x > 88.72 gives +Inf; NaN gives NaN. It is vec.Exp32;
// loops should call vec.Exp, which does the same over a slice with SIMD.
func FastExp32(x float32) float32 { return vec.Exp32(x) }

// FastErf32 returns erf(x) in float32 with an absolute error below 1e-6
// (Abramowitz & Stegun 7.1.26 with FastExp32). It is vec.Erf32; loops
// should call vec.Erf.
func FastErf32(x float32) float32 { return vec.Erf32(x) }

const (
	invSqrt2   = 0.70710678118654752440
	invSqrt2Pi = 0.39894228040143267794
)

// normal64 returns Φ(x) and φ(x) in float64 from the math package.
func normal64(x float64) (cdf, pdf float64) {
	return 0.5 * math.Erfc(-x*invSqrt2), math.Exp(-0.5*x*x) * invSqrt2Pi
}

// expShift sets out[i] = e^(x[i]−shift) and returns the sum of the results;
// out may alias x. float32 uses vec.ExpSubMaxSum (FastExp32's accuracy, the
// sum in float32), float64 math.Exp.
func expShift[T Float](x, out []T, shift T) float64 {
	switch xs := any(x).(type) {
	case []float32:
		return float64(vec.ExpSubMaxSum(any(out).([]float32), xs, float32(shift)))
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
			a += float64(vec.ExpSubMaxSum(buf[:], chunk, float32(shift)))
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
