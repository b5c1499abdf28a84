package ops

import (
	"math"

	"github.com/vit-train/vit-train/nn/vec"
)

const (
	invSqrt2   = 0.70710678118654752440
	invSqrt2Pi = 0.39894228040143267794
)

// normal64 returns Φ(x) and φ(x) in float64 from the math package.
func normal64(x float64) (cdf, pdf float64) {
	return 0.5 * math.Erfc(-x*invSqrt2), math.Exp(-0.5*x*x) * invSqrt2Pi
}

// expShift sets out[i] = e^(x[i]−shift) and returns the sum of the results;
// out may alias x. float32 uses vec.ExpSubMaxSum (vec.Exp32's accuracy, the
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
