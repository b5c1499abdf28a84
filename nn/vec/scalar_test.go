package vec_test

import (
	"math"
	"testing"

	"github.com/vit-train/vit-train/nn/vec"
)

func TestExp32MatchesMath(t *testing.T) {
	worst, at := 0.0, 0.0
	for x := -87.0; x <= 88.7; x += 1.3e-4 {
		x32 := float32(x)
		want := math.Exp(float64(x32))
		got := float64(vec.Exp32(x32))
		if rel := math.Abs(got-want) / want; rel > worst {
			worst, at = rel, float64(x32)
		}
	}
	t.Logf("worst relative error %.3g at x = %g", worst, at)
	if worst > 2e-7 {
		t.Fatalf("relative error %.3g at x = %g exceeds 2e-7", worst, at)
	}
}

func TestExp32SpecialValues(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, tc := range []struct{ x, want float32 }{
		{0, 1},
		{1, float32(math.E)},
		{-inf, 0},
		{inf, inf},
		{89, inf},
		{-88, 0}, // subnormal results flush to zero
		{-1000, 0},
		{1000, inf},
	} {
		if got := vec.Exp32(tc.x); got != tc.want {
			t.Errorf("Exp32(%g) = %g, want %g", tc.x, got, tc.want)
		}
	}
	if got := vec.Exp32(float32(math.NaN())); got == got {
		t.Errorf("Exp32(NaN) = %g, want NaN", got)
	}
	// The largest finite results, where the 2^k scale needs the exponent 128.
	for _, x := range []float32{88.5, 88.7, 88.72283} {
		got, want := float64(vec.Exp32(x)), math.Exp(float64(x))
		if math.IsInf(got, 0) || math.Abs(got-want)/want > 2e-7 {
			t.Errorf("Exp32(%g) = %g, want %g", x, got, want)
		}
	}
}

func TestErf32MatchesMath(t *testing.T) {
	worst, at := 0.0, 0.0
	for x := -12.0; x <= 12; x += 5e-5 {
		x32 := float32(x)
		d := math.Abs(float64(vec.Erf32(x32)) - math.Erf(float64(x32)))
		if d > worst {
			worst, at = d, float64(x32)
		}
	}
	t.Logf("worst absolute error %.3g at x = %g", worst, at)
	if worst > 1e-6 {
		t.Fatalf("absolute error %.3g at x = %g exceeds 1e-6", worst, at)
	}
	inf := float32(math.Inf(1))
	for _, tc := range []struct{ x, want float32 }{{0, 0}, {inf, 1}, {-inf, -1}, {1e30, 1}, {-1e30, -1}} {
		if got := vec.Erf32(tc.x); math.Abs(float64(got-tc.want)) > 1e-7 {
			t.Errorf("Erf32(%g) = %g, want %g", tc.x, got, tc.want)
		}
	}
	if got := vec.Erf32(float32(math.NaN())); got == got {
		t.Errorf("Erf32(NaN) = %g, want NaN", got)
	}
}

func BenchmarkExp32(b *testing.B) {
	xs := make([]float32, 4096)
	for i := range xs {
		xs[i] = float32(i)/256 - 12
	}
	var s float32
	b.SetBytes(int64(4 * len(xs)))
	for b.Loop() {
		for _, x := range xs {
			s += vec.Exp32(x)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(xs)), "ns/elem")
	_ = s
}
