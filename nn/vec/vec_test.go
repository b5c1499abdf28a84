package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// offsets are the starting offsets (in elements) tried for every length:
// vector-aligned and not.
var offsets = []int{0, 1, 3}

// withSpecials overwrites a few random elements of x with edge values.
func withSpecials(rng *rand.Rand, x []float32) {
	for k := 0; k < len(x)/8+1 && len(x) > 0; k++ {
		x[rng.IntN(len(x))] = specials[rng.IntN(len(specials))]
	}
}

// ln(MaxFloat32): e^x rounds to +Inf in float32 a little above this.
var lnMaxFloat32 = math.Log(math.MaxFloat32)

// checkExpValue fails t unless got is e^x within 2e-7 relative error, 0
// when x < ln 2⁻¹²⁶, +Inf when e^x rounds to +Inf, and NaN for NaN.
func checkExpValue(t *testing.T, what string, x, got float32) {
	t.Helper()
	xf := float64(x)
	want := math.Exp(xf)
	switch {
	case x != x:
		if got == got {
			t.Fatalf("%s: exp(NaN) = %g, want NaN", what, got)
		}
	case xf < expMin:
		if got != 0 {
			t.Fatalf("%s: exp(%g) = %g, want 0 (flushed)", what, x, got)
		}
	case math.IsInf(float64(float32(want)), 1):
		if !math.IsInf(float64(got), 1) {
			t.Fatalf("%s: exp(%g) = %g, want +Inf", what, x, got)
		}
	default:
		if e := relErr(float64(got), want); !(e <= 2e-7) {
			t.Fatalf("%s: exp(%g) = %g, want %g (relative error %.3g)", what, x, got, want, e)
		}
	}
}

// TestExpSubnormalBoundary: the float32 nearest ln 2⁻¹²⁶ lies below it,
// so its e^x is subnormal and flushed to 0; the next float32 up gives the
// least normal results, in every lane of a vector.
func TestExpSubnormalBoundary(t *testing.T) {
	below := math.Float32frombits(0xc2aeac50) // −87.33654785 < ln 2⁻¹²⁶
	above := math.Float32frombits(0xc2aeac4f) // −87.33654022 > ln 2⁻¹²⁶
	forEachLevel(t, func(t *testing.T) {
		for _, n := range []int{1, 8, 16, 19} {
			x := make([]float32, n)
			for i := range x {
				x[i] = below
				if i%2 == 1 {
					x[i] = above
				}
			}
			d := make([]float32, n)
			Exp(d, x)
			for i, v := range d {
				if x[i] == below && v != 0 {
					t.Fatalf("n %d: exp(%g) = %g, want 0", n, x[i], v)
				}
				if x[i] == above && !(v >= math.SmallestNonzeroFloat32*(1<<23) && v < 1.1755e-38) {
					t.Fatalf("n %d: exp(%g) = %g, want the least normal float32s (about 1.17549e-38)", n, x[i], v)
				}
			}
		}
	})
}

func TestExp(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 1))
		for _, n := range testLengths {
			for _, off := range offsets {
				xg := randGuarded(rng, n, off, -100, 100)
				withSpecials(rng, xg.s())
				dg := newGuarded(n, (off+1)%4)
				Exp(dg.s(), xg.s())
				dg.check(t, "Exp "+name(n, off))
				for i, v := range xg.s() {
					checkExpValue(t, "Exp "+name(n, off), v, dg.s()[i])
				}
				want := append([]float32(nil), dg.s()...)
				Exp(xg.s(), xg.s()) // in place
				xg.check(t, "Exp in place")
				for i, v := range xg.s() {
					if math.Float32bits(v) != math.Float32bits(want[i]) && !(v != v && want[i] != want[i]) {
						t.Fatalf("Exp in place %s [%d] = %g, out of place %g", name(n, off), i, v, want[i])
					}
				}
			}
		}
	})
}

// TestExpAccuracy measures the relative error over the whole finite range
// on a dense grid, and the edges.
func TestExpAccuracy(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		var xs []float32
		for x := -87.3; x <= 88.72; x += 1.1e-4 {
			xs = append(xs, float32(x))
		}
		xs = append(xs, 88.72283, -87.336, math.Nextafter32(expMin, 0), -1e-30, 1e-30, 0)
		got := make([]float32, len(xs))
		Exp(got, xs)
		worst, at := 0.0, 0.0
		for i, x := range xs {
			if e := relErr(float64(got[i]), math.Exp(float64(x))); e > worst {
				worst, at = e, float64(x)
			}
		}
		t.Logf("worst relative error %.3g at x = %g over %d points", worst, at, len(xs))
		if worst > 2e-7 {
			t.Fatalf("relative error %.3g at x = %g exceeds 2e-7", worst, at)
		}
		inf := float32(math.Inf(1))
		for _, tc := range []struct{ x, want float32 }{
			{0, 1}, {-inf, 0}, {inf, inf}, {89, inf}, {88.7229, inf}, {1000, inf}, {1e30, inf}, {math.MaxFloat32, inf},
			{-88, 0}, {-87.34, 0}, {-1000, 0}, {-math.MaxFloat32, 0},
		} {
			v := []float32{tc.x}
			Exp(v, v)
			if v[0] != tc.want {
				t.Errorf("Exp(%g) = %g, want %g", tc.x, v[0], tc.want)
			}
		}
		v := []float32{float32(math.NaN())}
		Exp(v, v)
		if v[0] == v[0] {
			t.Errorf("Exp(NaN) = %g, want NaN", v[0])
		}
	})
}

func TestExpSubMaxSum(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(2, 1))
		for _, n := range testLengths {
			for _, off := range offsets {
				xg := randGuarded(rng, n, off, -30, 10)
				x := xg.s()
				m := Max(x)
				if rng.IntN(2) == 0 {
					m = float32(rng.Float64()*20 - 10)
				}
				dg := newGuarded(n, (off+2)%4)
				s := ExpSubMaxSum(dg.s(), x, m)
				dg.check(t, "ExpSubMaxSum "+name(n, off))
				ref, mag := 0.0, 0.0
				for i, v := range x {
					got := dg.s()[i]
					checkExpValue(t, "ExpSubMaxSum "+name(n, off), v-m, got)
					ref += float64(got)
					mag += math.Abs(float64(got))
				}
				if d := math.Abs(float64(s) - ref); d > sumTol(n, mag) {
					t.Fatalf("ExpSubMaxSum %s: sum %g, want %g (|Δ| %.3g > %.3g)", name(n, off), s, ref, d, sumTol(n, mag))
				}
			}
		}
		if s := ExpSubMaxSum(nil, nil, 0); s != 0 {
			t.Fatalf("ExpSubMaxSum of nothing = %g", s)
		}
	})
}

// Softmax gives the bits of its three passes, Max, ExpSubMaxSum and Scale
// by the sum's inverse, for every length and alignment, with ±Inf, NaN
// and ±0 among the values, in place and not.
func TestSoftmaxIsItsThreePasses(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(4, 1))
		special := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0, float32(math.Copysign(0, -1)), -200}
		for _, n := range testLengths {
			for _, off := range offsets {
				x := randGuarded(rng, n, off, -30, 10).s()
				if n > 0 && rng.IntN(3) == 0 {
					x[rng.IntN(n)] = special[rng.IntN(len(special))]
				}
				want := make([]float32, n)
				if n > 0 {
					Scale(want, want, 1/ExpSubMaxSum(want, x, Max(x)))
				}
				dg := newGuarded(n, (off+1)%4)
				Softmax(dg.s(), x)
				dg.check(t, "Softmax "+name(n, off))
				inPlace := append([]float32(nil), x...)
				Softmax(inPlace, inPlace)
				for i := range want {
					if got := dg.s()[i]; math.Float32bits(got) != math.Float32bits(want[i]) {
						t.Fatalf("Softmax %s: [%d] = %g, want %g", name(n, off), i, got, want[i])
					}
					if got := inPlace[i]; math.Float32bits(got) != math.Float32bits(want[i]) {
						t.Fatalf("Softmax in place %s: [%d] = %g, want %g", name(n, off), i, got, want[i])
					}
				}
			}
		}
	})
}

// SoftmaxRows gives Softmax's bits row by row, for several row lengths,
// counts and strides, with ±Inf, NaN and ±0 among the values, in place
// and not, writing nothing past its rows nor between them.
func TestSoftmaxRowsIsSoftmaxOfEachRow(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(4, 2))
		special := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0, float32(math.Copysign(0, -1)), -200}
		const between = 7.5 // what lies between rows, in dst and in place
		for _, n := range []int{1, 5, 16, 17, 50, 65, 197} {
			for _, ld := range []int{n, n + 3, (n + 15) / 16 * 16} {
				for _, rows := range []int{1, 2, 7} {
					name := fmt.Sprintf("%d rows of %d, %d apart", rows, n, ld)
					size := (rows-1)*ld + n
					x := randGuarded(rng, size, 1, -30, 10).s()
					for range rows / 2 {
						x[rng.IntN(len(x))] = special[rng.IntN(len(special))]
					}
					inRow := func(i int) bool { return i%ld < n }
					for i := range x {
						if !inRow(i) {
							x[i] = between
						}
					}
					want := append([]float32(nil), x...)
					for r := range rows {
						Softmax(want[r*ld:r*ld+n], x[r*ld:r*ld+n])
					}
					dg := newGuarded(size, 2)
					dst := dg.s()
					for i := range dst {
						if !inRow(i) {
							dst[i] = between
						}
					}
					SoftmaxRows(dst, x, rows, n, ld)
					dg.check(t, "SoftmaxRows of "+name)
					inPlace := append([]float32(nil), x...)
					SoftmaxRows(inPlace, inPlace, rows, n, ld)
					for i := range want {
						if got := dst[i]; math.Float32bits(got) != math.Float32bits(want[i]) {
							t.Fatalf("SoftmaxRows of %s: [%d] = %g, want %g", name, i, got, want[i])
						}
						if got := inPlace[i]; math.Float32bits(got) != math.Float32bits(want[i]) {
							t.Fatalf("SoftmaxRows in place of %s: [%d] = %g, want %g", name, i, got, want[i])
						}
					}
				}
			}
		}
	})
}

func TestMax(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 1))
		for _, n := range testLengths {
			for _, off := range offsets {
				x := randGuarded(rng, n, off, -1e3, 1e3).s()
				want := float32(math.Inf(-1))
				for _, v := range x {
					want = max(want, v)
				}
				if got := Max(x); got != want {
					t.Fatalf("Max %s = %g, want %g", name(n, off), got, want)
				}
				if n == 0 {
					continue
				}
				// A large value at each position in turn, on short slices.
				if n <= 70 {
					for i := range x {
						old := x[i]
						x[i] = 1e4
						if got := Max(x); got != 1e4 {
							t.Fatalf("Max %s with 1e4 at %d = %g", name(n, off), i, got)
						}
						x[i] = old
					}
				}
				i := rng.IntN(n)
				x[i] = float32(math.NaN())
				if got := Max(x); got == got {
					t.Fatalf("Max %s with NaN at %d = %g, want NaN", name(n, off), i, got)
				}
			}
		}
		inf := float32(math.Inf(1))
		if got := Max([]float32{-inf, -inf, -inf}); got != -inf {
			t.Fatalf("Max(-Inf…) = %g", got)
		}
		if got := Max([]float32{1, inf, 2}); got != inf {
			t.Fatalf("Max(1, +Inf, 2) = %g", got)
		}
	})
}

func TestSumDotSumSqDev(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(4, 1))
		for _, n := range testLengths {
			for _, off := range offsets {
				x := randGuarded(rng, n, off, -2, 3).s()
				y := randGuarded(rng, n, (off+1)%4, -1, 1).s()
				m := float32(rng.Float64() - 0.5)
				var s, sm, d, dm, q, qm float64
				for i, v := range x {
					s += float64(v)
					sm += math.Abs(float64(v))
					p := float64(v) * float64(y[i])
					d += p
					dm += math.Abs(p)
					e := float64(v - m) // the kernels subtract in float32
					q += e * e
					qm += e * e
				}
				if got := Sum(x); math.Abs(float64(got)-s) > sumTol(n, sm) {
					t.Fatalf("Sum %s = %g, want %g", name(n, off), got, s)
				}
				if got := Dot(x, y); math.Abs(float64(got)-d) > sumTol(n, dm) {
					t.Fatalf("Dot %s = %g, want %g", name(n, off), got, d)
				}
				if got := SumSqDev(x, m); math.Abs(float64(got)-q) > sumTol(n, qm) {
					t.Fatalf("SumSqDev %s = %g, want %g", name(n, off), got, q)
				}
				if n > 0 {
					mean, variance := MeanVar(x)
					wm := s / float64(n)
					wv := 0.0
					for _, v := range x {
						wv += (float64(v) - wm) * (float64(v) - wm)
					}
					wv /= float64(n)
					if math.Abs(float64(mean)-wm) > sumTol(n, sm)/float64(n)+eps32*math.Abs(wm) ||
						math.Abs(float64(variance)-wv) > 1e-5*wv+1e-7 {
						t.Fatalf("MeanVar %s = %g, %g, want %g, %g", name(n, off), mean, variance, wm, wv)
					}
				}
			}
		}
	})
}

// TestElementwise checks Scale, AddConst, Mul and MulDiff (exact: one or
// two rounded float32 operations per element, the same in every
// implementation), ReLU and ReLUGrad (exact: a comparison), and AXPY
// (within one rounding of the exact result).
func TestElementwise(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 1))
		for _, n := range testLengths {
			for _, off := range offsets {
				x := randGuarded(rng, n, off, -4, 4).s()
				y := randGuarded(rng, n, (off+3)%4, -4, 4).s()
				a := float32(rng.Float64()*4 - 2)
				for _, k := range []struct {
					name string
					run  func(dst []float32)
					want func(i int, d0 float32) float32
				}{
					{"Scale", func(dst []float32) { Scale(dst, x, a) }, func(i int, _ float32) float32 { return a * x[i] }},
					{"AddConst", func(dst []float32) { AddConst(dst, x, a) }, func(i int, _ float32) float32 { return x[i] + a }},
					{"Add", func(dst []float32) { Add(dst, x, y) }, func(i int, _ float32) float32 { return x[i] + y[i] }},
					{"Mul", func(dst []float32) { Mul(dst, x, y) }, func(i int, _ float32) float32 { return x[i] * y[i] }},
					{"MulDiff", func(dst []float32) { MulDiff(dst, y, x, a) }, func(i int, _ float32) float32 { return y[i] * float32(x[i]-a) }},
					{"ReLU", func(dst []float32) { ReLU(dst, x) }, func(i int, _ float32) float32 { return max(x[i], 0) }},
					{"ReLUGrad", func(dst []float32) { ReLUGrad(dst, x, y) }, func(i int, _ float32) float32 {
						if x[i] > 0 {
							return y[i]
						}
						return 0
					}},
				} {
					dg := randGuarded(rng, n, (off+2)%4, -1, 1)
					k.run(dg.s())
					dg.check(t, k.name+" "+name(n, off))
					for i, got := range dg.s() {
						if want := k.want(i, 0); got != want {
							t.Fatalf("%s %s [%d] = %g, want %g", k.name, name(n, off), i, got, want)
						}
					}
				}
				dg := randGuarded(rng, n, (off+2)%4, -1, 1)
				d0 := append([]float32(nil), dg.s()...)
				AXPY(dg.s(), x, a)
				dg.check(t, "AXPY "+name(n, off))
				for i, got := range dg.s() {
					p := float64(a) * float64(x[i])
					want := float64(d0[i]) + p
					if d := math.Abs(float64(got) - want); d > eps32*(math.Abs(want)+math.Abs(p)) {
						t.Fatalf("AXPY %s [%d] = %g, want %g", name(n, off), i, got, want)
					}
				}
			}
		}
	})
}

// TestReLUSpecials checks ReLU and ReLUGrad bit for bit on the values a
// comparison with zero treats apart: −0 and NaN pass through ReLU, which
// zeroes only what is below zero, and ReLUGrad passes dy only where y > 0.
func TestReLUSpecials(t *testing.T) {
	negZero, nan := float32(math.Copysign(0, -1)), math.Float32frombits(0x7fc01234)
	negNaN := math.Float32frombits(0xffc04321)
	in := []float32{negZero, 0, nan, negNaN, float32(math.Inf(-1)), float32(math.Inf(1)), -1e-45, 1e-45, -3, 3}
	relu := []float32{negZero, 0, nan, negNaN, 0, float32(math.Inf(1)), 0, 1e-45, 0, 3}
	grad := []float32{0, 0, 0, 0, 0, 7, 0, 7, 0, 7}
	forEachLevel(t, func(t *testing.T) {
		// Every position of a vector and its tail, in both kernels.
		for shift := range 17 {
			x := append(make([]float32, shift), in...)
			dy := make([]float32, len(x))
			for i := range dy {
				dy[i] = 7
			}
			got, gotGrad := make([]float32, len(x)), make([]float32, len(x))
			ReLU(got, x)
			ReLUGrad(gotGrad, x, dy)
			for i := range in {
				if g := got[shift+i]; math.Float32bits(g) != math.Float32bits(relu[i]) {
					t.Fatalf("ReLU(%v) at %d = %v (%#x), want %v (%#x)", in[i], shift+i, g, math.Float32bits(g), relu[i], math.Float32bits(relu[i]))
				}
				if g := gotGrad[shift+i]; math.Float32bits(g) != math.Float32bits(grad[i]) {
					t.Fatalf("ReLUGrad(y = %v, dy = 7) at %d = %v (%#x), want %v", in[i], shift+i, g, math.Float32bits(g), grad[i])
				}
			}
		}
	})
}

// erfRef is erf in float64.
func erfRef(x float32) float64 { return math.Erf(float64(x)) }

// geluRef returns GELU(x) and GELU'(x) in float64.
func geluRef(x float32) (y, d float64) {
	v := float64(x)
	cdf := 0.5 * math.Erfc(-v/math.Sqrt2)
	pdf := math.Exp(-v*v/2) / math.Sqrt(2*math.Pi)
	return v * cdf, cdf + v*pdf
}

// checkErfValue fails t unless got is erf(x) within 1e-6, or NaN for NaN.
func checkErfValue(t *testing.T, what string, x, got float32) {
	t.Helper()
	want := erfRef(x)
	if !sameNaN(float64(got), want) || math.Abs(float64(got)-want) > 1e-6 {
		t.Fatalf("%s: erf(%g) = %.9g, want %.9g", what, x, got, want)
	}
}

// checkGELUValue fails t unless y and d are GELU(x) and GELU'(x) within
// 1e-6·max(1, |x|), infinities and NaNs matching.
func checkGELUValue(t *testing.T, what string, x, y, d float32) {
	t.Helper()
	wy, wd := geluRef(x)
	tol := 1e-6 * math.Max(1, math.Abs(float64(x)))
	for _, c := range []struct {
		what      string
		got, want float64
	}{{"GELU", float64(y), wy}, {"GELU'", float64(d), wd}} {
		if math.IsNaN(c.got) && math.IsNaN(c.want) {
			continue
		}
		if !sameNaN(c.got, c.want) || (c.got != c.want && !(math.Abs(c.got-c.want) <= tol)) {
			t.Fatalf("%s: %s(%g) = %.9g, want %.9g", what, c.what, x, c.got, c.want)
		}
	}
}

func TestErf(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		var xs []float32
		for x := -12.0; x <= 12; x += 3e-5 {
			xs = append(xs, float32(x))
		}
		xs = append(xs, specials...)
		got := make([]float32, len(xs))
		Erf(got, xs)
		worst, at := 0.0, 0.0
		for i, x := range xs {
			checkErfValue(t, "Erf", x, got[i])
			if d := math.Abs(float64(got[i]) - erfRef(x)); d > worst {
				worst, at = d, float64(x)
			}
		}
		t.Logf("worst absolute error %.3g at x = %g over %d points", worst, at, len(xs))
		rng := rand.New(rand.NewPCG(6, 1))
		for _, n := range testLengths {
			for _, off := range offsets {
				xg := randGuarded(rng, n, off, -5, 5)
				withSpecials(rng, xg.s())
				dg := newGuarded(n, (off+1)%4)
				Erf(dg.s(), xg.s())
				dg.check(t, "Erf "+name(n, off))
				for i, v := range xg.s() {
					checkErfValue(t, "Erf "+name(n, off), v, dg.s()[i])
				}
			}
		}
	})
}

func TestGELU(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		var xs []float32
		for x := -14.0; x <= 14; x += 3e-5 {
			xs = append(xs, float32(x))
		}
		xs = append(xs, specials...)
		y, d := make([]float32, len(xs)), make([]float32, len(xs))
		GELUAndDeriv(y, d, xs)
		worstY, worstD := 0.0, 0.0
		for i, x := range xs {
			checkGELUValue(t, "GELUAndDeriv", x, y[i], d[i])
			if math.IsInf(float64(x), 0) || x != x {
				continue
			}
			wy, wd := geluRef(x)
			s := math.Max(1, math.Abs(float64(x)))
			worstY = math.Max(worstY, math.Abs(float64(y[i])-wy)/s)
			worstD = math.Max(worstD, math.Abs(float64(d[i])-wd)/s)
		}
		t.Logf("worst error / max(1, |x|) over %d points: GELU %.3g, GELU' %.3g", len(xs), worstY, worstD)
		rng := rand.New(rand.NewPCG(7, 1))
		for _, n := range testLengths {
			for _, off := range offsets {
				xg := randGuarded(rng, n, off, -6, 6)
				withSpecials(rng, xg.s())
				x := xg.s()
				yg, dg := newGuarded(n, (off+1)%4), newGuarded(n, (off+2)%4)
				GELUAndDeriv(yg.s(), dg.s(), x)
				yg.check(t, "GELUAndDeriv y "+name(n, off))
				dg.check(t, "GELUAndDeriv deriv "+name(n, off))
				for i, v := range x {
					checkGELUValue(t, "GELUAndDeriv "+name(n, off), v, yg.s()[i], dg.s()[i])
				}
				// The single-output forms give the same bits, also in place.
				y1, d1 := newGuarded(n, off), newGuarded(n, (off+3)%4)
				GELU(y1.s(), x)
				GELUDeriv(d1.s(), x)
				y1.check(t, "GELU "+name(n, off))
				d1.check(t, "GELUDeriv "+name(n, off))
				xc := append([]float32(nil), x...)
				GELU(xc, xc)
				for i := range x {
					if !sameBits(y1.s()[i], yg.s()[i]) || !sameBits(d1.s()[i], dg.s()[i]) || !sameBits(xc[i], yg.s()[i]) {
						t.Fatalf("%s [%d]: GELU %g, GELUDeriv %g, in place %g; GELUAndDeriv %g, %g", name(n, off), i, y1.s()[i], d1.s()[i], xc[i], yg.s()[i], dg.s()[i])
					}
				}
				// So does the streaming form, its slope on a 64-byte
				// boundary (whole vectors streamed) or one element past.
				for _, shift := range []int{0, 1} {
					ys, ds := newGuarded(n, off), newGuardedPastBoundary(n, shift)
					GELUAndDerivStreaming(ys.s(), ds.s(), x)
					StoreFence()
					what := fmt.Sprintf("GELUAndDerivStreaming %s, slope %d past a boundary", name(n, off), shift)
					ys.check(t, what)
					ds.check(t, what)
					for i := range x {
						if !sameBits(ys.s()[i], yg.s()[i]) || !sameBits(ds.s()[i], dg.s()[i]) {
							t.Fatalf("%s [%d]: %g, %g; GELUAndDeriv %g, %g", what, i, ys.s()[i], ds.s()[i], yg.s()[i], dg.s()[i])
						}
					}
				}
			}
		}
	})
}

// sameBits reports whether a and b are the same float32 or both NaN.
func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

func TestLayerNormKernels(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(8, 1))
		for _, n := range testLengths {
			for _, off := range offsets {
				x := randGuarded(rng, n, off, -2, 3).s()
				dy := randGuarded(rng, n, (off+1)%4, -1, 1).s()
				w := randGuarded(rng, n, (off+2)%4, 0.5, 1.5).s()
				b := randGuarded(rng, n, (off+3)%4, -1, 1).s()
				mean, rstd := float32(rng.Float64()-0.5), float32(0.5+rng.Float64())
				a, c := float32(rng.Float64()-0.5), float32(rng.Float64()-0.5)

				yg := newGuarded(n, off)
				LayerNormRow(yg.s(), x, w, b, mean, rstd)
				yg.check(t, "LayerNormRow "+name(n, off))
				var sg, sgx, mg, mgx float64
				for j, v := range x {
					xh := float64(v-mean) * float64(rstd)
					want := xh*float64(w[j]) + float64(b[j])
					tol := 4 * eps32 * (math.Abs(xh*float64(w[j])) + math.Abs(float64(b[j])))
					if got := float64(yg.s()[j]); math.Abs(got-want) > tol {
						t.Fatalf("LayerNormRow %s [%d] = %g, want %g", name(n, off), j, got, want)
					}
					g := float64(dy[j]) * float64(w[j])
					sg += g
					mg += math.Abs(g)
					sgx += g * xh
					mgx += math.Abs(g * xh)
				}
				gotSg, gotSgx := LayerNormGradSums(x, dy, w, mean, rstd)
				if math.Abs(float64(gotSg)-sg) > sumTol(n, mg) || math.Abs(float64(gotSgx)-sgx) > 3*sumTol(n, mgx) {
					t.Fatalf("LayerNormGradSums %s = %g, %g, want %g, %g", name(n, off), gotSg, gotSgx, sg, sgx)
				}

				dg := newGuarded(n, (off+1)%4)
				LayerNormGradRow(dg.s(), x, dy, w, mean, rstd, a, c)
				dg.check(t, "LayerNormGradRow "+name(n, off))
				for j, v := range x {
					xh := float64(v-mean) * float64(rstd)
					g := float64(dy[j]) * float64(w[j])
					want := float64(rstd) * (g - float64(a) - xh*float64(c))
					tol := 6 * eps32 * float64(rstd) * (math.Abs(g) + math.Abs(float64(a)) + math.Abs(xh*float64(c)))
					if got := float64(dg.s()[j]); math.Abs(got-want) > tol {
						t.Fatalf("LayerNormGradRow %s [%d] = %g, want %g", name(n, off), j, got, want)
					}
				}

				acc := make([]float64, n+5)
				for j := range acc {
					acc[j] = float64(j) * 0.25
				}
				LayerNormGradWeightAcc(acc[2:2+n], x, dy, mean, rstd)
				for j := range acc {
					want := float64(j) * 0.25
					if j >= 2 && j < 2+n {
						xh := float64(x[j-2]-mean) * float64(rstd)
						p := float64(dy[j-2]) * xh
						want += p
						if d := math.Abs(acc[j] - want); d > 3*eps32*math.Abs(p)+1e-15*math.Abs(want) {
							t.Fatalf("LayerNormGradWeightAcc %s [%d] = %g, want %g", name(n, off), j-2, acc[j], want)
						}
					} else if acc[j] != want {
						t.Fatalf("LayerNormGradWeightAcc %s wrote acc[%d] outside the row", name(n, off), j-2)
					}
				}
			}
		}
	})
}

// adamwRef64 is the AdamW update in float64 from the float32 inputs, the
// gradient scaled in float32 as the kernels scale it.
func adamwRef64(p, g, m, v float32, c AdamWCoef) (pn, mn, vn float64) {
	g *= c.GradScale
	mn = float64(c.Beta1)*float64(m) + float64(c.OneMinusBeta1)*float64(g)
	vn = float64(c.Beta2)*float64(v) + float64(c.OneMinusBeta2)*float64(g)*float64(g)
	den := math.Sqrt(vn)*float64(c.InvSqrtBC2) + float64(c.Eps)
	return float64(p)*float64(c.DecayMul) - float64(c.StepSize)*mn/den, mn, vn
}

func TestAdamW(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	coef := func(step int, gradScale float32) AdamWCoef {
		b1, b2, lr, wd := 0.9, 0.999, 1e-3, 0.05
		return AdamWCoef{
			Beta1: float32(b1), OneMinusBeta1: float32(1 - b1),
			Beta2: float32(b2), OneMinusBeta2: float32(1 - b2),
			Eps: 1e-8, InvSqrtBC2: float32(1 / math.Sqrt(1-math.Pow(b2, float64(step)))),
			DecayMul: float32(1 - lr*wd), StepSize: float32(lr / (1 - math.Pow(b1, float64(step)))),
			GradScale: gradScale,
		}
	}
	for _, n := range testLengths {
		for _, off := range offsets {
			p0 := randGuarded(rng, n, off, -1, 1).s()
			g := randGuarded(rng, n, (off+1)%4, -1, 1).s()
			m0 := randGuarded(rng, n, (off+2)%4, -0.1, 0.1).s()
			v0 := randGuarded(rng, n, (off+3)%4, 0, 0.01).s()
			if n > 0 {
				v0[0], m0[0] = 0, 0 // a first step
			}
			// Every other case clips: a scale below 1 that rounds g.
			gradScale := float32(1)
			if (n+off)%2 == 1 {
				gradScale = float32(0.1 + 0.8*rng.Float64())
			}
			c := coef(1+rng.IntN(100), gradScale)
			// The reference: the scalar formula, one rounding per operation.
			rp, rm, rv := append([]float32(nil), p0...), append([]float32(nil), m0...), append([]float32(nil), v0...)
			if n > 0 {
				adamwGeneric(rp, g, rm, rv, &c)
			}
			for i := range rp {
				pn, mn, vn := adamwRef64(p0[i], g[i], m0[i], v0[i], c)
				upd := math.Abs(pn - float64(p0[i])*float64(c.DecayMul))
				mMag := math.Abs(float64(c.Beta1)*float64(m0[i])) + math.Abs(float64(c.OneMinusBeta1)*float64(g[i]))
				if math.Abs(float64(rp[i])-pn) > 8*eps32*(math.Abs(pn)+upd) || math.Abs(float64(rm[i])-mn) > 2*eps32*mMag || relErr(float64(rv[i]), vn) > 3*eps32 {
					t.Fatalf("scalar AdamW %s [%d]: p, m, v = %g, %g, %g, want %g, %g, %g", name(n, off), i, rp[i], rm[i], rv[i], pn, mn, vn)
				}
			}
			forEachLevel(t, func(t *testing.T) {
				pg, mg, vg := newGuarded(n, off), newGuarded(n, (off+2)%4), newGuarded(n, (off+3)%4)
				copy(pg.s(), p0)
				copy(mg.s(), m0)
				copy(vg.s(), v0)
				AdamW(pg.s(), g, mg.s(), vg.s(), c)
				pg.check(t, "AdamW p")
				mg.check(t, "AdamW m")
				vg.check(t, "AdamW v")
				for i := range p0 {
					if !sameBits(pg.s()[i], rp[i]) || !sameBits(mg.s()[i], rm[i]) || !sameBits(vg.s()[i], rv[i]) {
						t.Fatalf("AdamW %s [%d]: p, m, v = %g, %g, %g, scalar %g, %g, %g", name(n, off), i, pg.s()[i], mg.s()[i], vg.s()[i], rp[i], rm[i], rv[i])
					}
				}
			})
		}
	}
}

// TestAdamWGradScale checks that AdamW with a GradScale updates as AdamW
// with 1 does from the gradient scaled beforehand, bit for bit.
func TestAdamWGradScale(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 2))
	const n = 1000
	p0, g := randGuarded(rng, n, 0, -1, 1).s(), randGuarded(rng, n, 1, -1, 1).s()
	m0, v0 := randGuarded(rng, n, 2, -0.1, 0.1).s(), randGuarded(rng, n, 3, 0, 0.01).s()
	c := AdamWCoef{0.9, 0.1, 0.999, 0.001, 1e-8, 1.2, 0.9999, 1e-3, 0.37}
	forEachLevel(t, func(t *testing.T) {
		scaled := make([]float32, n)
		for i := range g {
			scaled[i] = g[i] * c.GradScale
		}
		ones := c
		ones.GradScale = 1
		p1, m1, v1 := slices.Clone(p0), slices.Clone(m0), slices.Clone(v0)
		AdamW(p1, scaled, m1, v1, ones)
		p2, m2, v2 := slices.Clone(p0), slices.Clone(m0), slices.Clone(v0)
		gc := slices.Clone(g)
		AdamW(p2, gc, m2, v2, c)
		for i := range p1 {
			if !sameBits(p1[i], p2[i]) || !sameBits(m1[i], m2[i]) || !sameBits(v1[i], v2[i]) || !sameBits(gc[i], g[i]) {
				t.Fatalf("[%d]: p, m, v, g = %g, %g, %g, %g; from the scaled gradient %g, %g, %g, %g", i, p2[i], m2[i], v2[i], gc[i], p1[i], m1[i], v1[i], g[i])
			}
		}
	})
}

// sumSquaresRef is SumSquares64's definition written out: four running
// sums over the strided elements, the rest into the first.
func sumSquaresRef(x []float32) float64 {
	var s [4]float64
	whole := len(x) &^ 3
	for i, v := range x[:whole] {
		s[i%4] += float64(v) * float64(v)
	}
	for _, v := range x[whole:] {
		s[0] += float64(v) * float64(v)
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

func TestSumSquares64(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 3))
	forEachLevel(t, func(t *testing.T) {
		for _, n := range testLengths {
			for _, off := range offsets {
				g := randGuarded(rng, n, off, -3, 3)
				x := g.s()
				for i := range x {
					if rng.IntN(17) == 0 {
						x[i] = specials[rng.IntN(len(specials))]
					}
				}
				got, want := SumSquares64(x), sumSquaresRef(x)
				g.check(t, "SumSquares64")
				if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
					t.Fatalf("SumSquares64 %s = %v, want %v", name(n, off), got, want)
				}
			}
		}
	})
}

// TestSumSquares64x4 checks each of SumSquares64x4's four sums against
// SumSquares64's definition, bit for bit, over slices of every test
// length at every offset, with special values among them, and that it
// refuses slices of different lengths.
func TestSumSquares64x4(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 4))
	forEachLevel(t, func(t *testing.T) {
		for _, n := range testLengths {
			for k, off := range offsets {
				var gs [4]*guarded
				var xs [4][]float32
				for i := range gs {
					gs[i] = randGuarded(rng, n, offsets[(k+i)%len(offsets)], -3, 3)
					xs[i] = gs[i].s()
					for j := range xs[i] {
						if rng.IntN(17) == 0 {
							xs[i][j] = specials[rng.IntN(len(specials))]
						}
					}
				}
				got := SumSquares64x4(xs[0], xs[1], xs[2], xs[3])
				for i := range gs {
					gs[i].check(t, "SumSquares64x4")
					want := sumSquaresRef(xs[i])
					if math.Float64bits(got[i]) != math.Float64bits(want) && !(math.IsNaN(got[i]) && math.IsNaN(want)) {
						t.Fatalf("SumSquares64x4 %s, slice %d = %v, want %v", name(n, off), i, got[i], want)
					}
				}
			}
		}
	})
	defer func() {
		if recover() == nil {
			t.Fatal("SumSquares64x4 of slices of different lengths did not panic")
		}
	}()
	x := make([]float32, 8)
	SumSquares64x4(x, x, x, x[:7])
}

func TestEmptyAndShort(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		if Max(nil) != float32(math.Inf(-1)) || Sum(nil) != 0 || Dot(nil, nil) != 0 || SumSqDev(nil, 1) != 0 {
			t.Fatal("reductions of nothing")
		}
		Exp(nil, nil)
		GELU(nil, nil)
		AdamW(nil, nil, nil, nil, AdamWCoef{})
		for _, f := range []func(){
			func() { Exp(make([]float32, 2), make([]float32, 3)) },
			func() { Dot(make([]float32, 3), make([]float32, 2)) },
			func() { GELUAndDeriv(make([]float32, 3), make([]float32, 2), make([]float32, 3)) },
			func() {
				AdamW(make([]float32, 3), make([]float32, 3), make([]float32, 2), make([]float32, 3), AdamWCoef{})
			},
			func() {
				LayerNormRow(make([]float32, 3), make([]float32, 3), make([]float32, 3), make([]float32, 2), 0, 1)
			},
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Error("a short slice did not panic")
					}
				}()
				f()
			}()
		}
	})
}

func TestImplementation(t *testing.T) {
	t.Logf("kernels in use: %s; available: %v", Implementation(), availableLevels())
	if Implementation() != levelNames[availableLevels()[len(availableLevels())-1]] {
		t.Fatalf("Implementation() = %s, not the best available", Implementation())
	}
}

// TestScalarForms checks Exp32 and Erf32 against the slice kernels' bounds.
func TestScalarForms(t *testing.T) {
	for x := -100.0; x <= 100; x += 7.3e-3 {
		checkExpValue(t, "Exp32", float32(x), Exp32(float32(x)))
		if x > -12 && x < 12 {
			checkErfValue(t, "Erf32", float32(x), Erf32(float32(x)))
		}
	}
	for _, x := range specials {
		checkExpValue(t, "Exp32", x, Exp32(x))
		checkErfValue(t, "Erf32", x, Erf32(x))
	}
}

// TestCopyStreaming checks CopyStreaming against copy at every length,
// with dst on a 64-byte boundary (streamed in whole vectors), half a
// vector past one (streamed by AVX2 only) and one element past (copied
// as usual), leaving everything outside dst alone.
func TestCopyStreaming(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 1))
		for _, n := range testLengths {
			src := randGuarded(rng, n+3, 1, -2, 2).s()
			for _, shift := range []int{0, 8, 1} {
				dst := newGuardedPastBoundary(n, shift)
				CopyStreaming(dst.s(), src)
				StoreFence()
				what := fmt.Sprintf("CopyStreaming n=%d, %d past a boundary", n, shift)
				dst.check(t, what)
				for i, v := range dst.s() {
					if !sameBits(v, src[i]) {
						t.Fatalf("%s [%d]: %g, want %g", what, i, v, src[i])
					}
				}
			}
		}
	})
}
