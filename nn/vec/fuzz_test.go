package vec

import (
	"encoding/binary"
	"math"
	"testing"
)

// Fuzz targets: each decodes its input into float32 slices, runs a kernel
// with the kernels in use (SIMD where the CPU has it) and with the pure-Go
// ones, and checks both against float64 references, or against each other
// bit for bit where every implementation must agree.

// fuzzSeeds adds a few inputs: lengths around the vector widths, specials.
func fuzzSeeds(f *testing.F) {
	for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 33, 65, 197} {
		b := make([]byte, 4*n)
		for i := 0; i < n; i++ {
			v := float32(i%13)*0.37 - 2
			if i%11 == 5 {
				v = specials[i%len(specials)]
			}
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		f.Add(b, uint8(n), uint64(0x3f8000003e800000)+uint64(n))
	}
}

// rawFloats decodes b as float32 bit patterns, skipping the first off%4
// values so the slice starts at any alignment.
func rawFloats(b []byte, off uint8) []float32 {
	x := make([]float32, len(b)/4)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x[min(int(off%4), len(x)):]
}

// boundedFloats decodes b as values in [−scale, scale], a 32-bit integer
// each, so sums cannot overflow.
func boundedFloats(b []byte, off uint8, scale float64) []float32 {
	x := make([]float32, len(b)/4)
	for i := range x {
		x[i] = float32(float64(int32(binary.LittleEndian.Uint32(b[4*i:]))) / (1 << 31) * scale)
	}
	return x[min(int(off%4), len(x)):]
}

// param maps 32 bits to a value in [lo, hi].
func param(bits uint32, lo, hi float64) float32 {
	return float32(lo + (hi-lo)*float64(bits)/math.MaxUint32)
}

// split returns k slices of len(x)/k values each, cut from x.
func split(x []float32, k int) [][]float32 {
	n := len(x) / k
	out := make([][]float32, k)
	for i := range out {
		out[i] = x[i*n : (i+1)*n : (i+1)*n]
	}
	return out
}

// bothLevels runs f with the generic kernels and then with the best ones.
func bothLevels(f func(l int)) {
	for _, l := range []int{levelGeneric, bestLevel()} {
		restore := setLevel(l)
		f(l)
		restore()
	}
}

func FuzzExp(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte, off uint8, _ uint64) {
		x := rawFloats(b, off)
		bothLevels(func(l int) {
			d := make([]float32, len(x))
			Exp(d, x)
			for i, v := range x {
				checkExpValue(t, levelNames[l], v, d[i])
			}
		})
	})
}

func FuzzExpSubMaxSum(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte, off uint8, p uint64) {
		x := boundedFloats(b, off, float64(param(uint32(p), 0, 200)))
		m := Max(x)
		if p>>63 != 0 {
			m = param(uint32(p>>32), -100, 100)
		}
		bothLevels(func(l int) {
			d := make([]float32, len(x))
			s := ExpSubMaxSum(d, x, m)
			ref, mag := 0.0, 0.0
			for i, v := range x {
				checkExpValue(t, levelNames[l], v-m, d[i])
				ref += float64(d[i])
				mag += math.Abs(float64(d[i]))
			}
			if math.IsInf(ref, 0) {
				return
			}
			if dd := math.Abs(float64(s) - ref); !(dd <= sumTol(len(x), mag)) && !(math.IsInf(float64(s), 1) && ref > math.MaxFloat32) {
				t.Fatalf("%s: ExpSubMaxSum sum %g, want %g", levelNames[l], s, ref)
			}
		})
	})
}

func FuzzMax(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte, off uint8, _ uint64) {
		x := rawFloats(b, off)
		want := maxGeneric(append([]float32{float32(math.Inf(-1))}, x...))
		bothLevels(func(l int) {
			if got := Max(x); !sameBits(got, want) && !(got == 0 && want == 0) {
				t.Fatalf("%s: Max = %g, want %g", levelNames[l], got, want)
			}
		})
	})
}

// fuzzReduction checks a float32 reduction against its float64 value.
func fuzzReduction(f *testing.F, kernel func(x, y []float32, c float32) float32, ref func(x, y []float32, c float32) (val, mag float64), pairs bool) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte, off uint8, p uint64) {
		x := boundedFloats(b, off, float64(param(uint32(p), 0, 1e4)))
		y := x
		if pairs {
			xy := split(x, 2)
			x, y = xy[0], xy[1]
		}
		c := param(uint32(p>>32), -1e4, 1e4)
		want, mag := ref(x, y, c)
		bothLevels(func(l int) {
			if got := kernel(x, y, c); !(math.Abs(float64(got)-want) <= sumTol(len(x), mag)) {
				t.Fatalf("%s: got %g, want %g (n = %d)", levelNames[l], got, want, len(x))
			}
		})
	})
}

func FuzzSum(f *testing.F) {
	fuzzReduction(f, func(x, _ []float32, _ float32) float32 { return Sum(x) }, func(x, _ []float32, _ float32) (s, m float64) {
		for _, v := range x {
			s += float64(v)
			m += math.Abs(float64(v))
		}
		return s, m
	}, false)
}

func FuzzDot(f *testing.F) {
	fuzzReduction(f, func(x, y []float32, _ float32) float32 { return Dot(x, y) }, func(x, y []float32, _ float32) (s, m float64) {
		for i, v := range x {
			p := float64(v) * float64(y[i])
			s += p
			m += math.Abs(p)
		}
		return s, m
	}, true)
}

func FuzzSumSqDev(f *testing.F) {
	fuzzReduction(f, func(x, _ []float32, c float32) float32 { return SumSqDev(x, c) }, func(x, _ []float32, c float32) (s, m float64) {
		for _, v := range x {
			d := float64(v - c)
			s += d * d
		}
		return s, s
	}, false)
}

// fuzzExact checks an element-wise kernel that every implementation
// computes with the same rounded operations: bit-identical results.
func fuzzExact(f *testing.F, k int, kernel func(dst []float32, in [][]float32, c float32)) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte, off uint8, p uint64) {
		in := split(rawFloats(b, off), k)
		c := math.Float32frombits(uint32(p))
		var want []float32
		bothLevels(func(l int) {
			d := make([]float32, len(in[0]))
			kernel(d, in, c)
			if want == nil {
				want = d
				return
			}
			for i := range d {
				if !sameBits(d[i], want[i]) {
					t.Fatalf("%s [%d] = %g, generic %g (inputs %v, c = %g)", levelNames[l], i, d[i], want[i], column(in, i), c)
				}
			}
		})
	})
}

func column(in [][]float32, i int) []float32 {
	var c []float32
	for _, s := range in {
		c = append(c, s[i])
	}
	return c
}

func FuzzScale(f *testing.F) {
	fuzzExact(f, 1, func(d []float32, in [][]float32, c float32) { Scale(d, in[0], c) })
}

func FuzzAddConst(f *testing.F) {
	fuzzExact(f, 1, func(d []float32, in [][]float32, c float32) { AddConst(d, in[0], c) })
}

func FuzzAdd(f *testing.F) {
	fuzzExact(f, 2, func(d []float32, in [][]float32, _ float32) { Add(d, in[0], in[1]) })
}

func FuzzMul(f *testing.F) {
	fuzzExact(f, 2, func(d []float32, in [][]float32, _ float32) { Mul(d, in[0], in[1]) })
}

func FuzzMulDiff(f *testing.F) {
	fuzzExact(f, 2, func(d []float32, in [][]float32, c float32) { MulDiff(d, in[0], in[1], c) })
}

func FuzzReLU(f *testing.F) {
	fuzzExact(f, 1, func(d []float32, in [][]float32, _ float32) { ReLU(d, in[0]) })
}

func FuzzReLUGrad(f *testing.F) {
	fuzzExact(f, 2, func(d []float32, in [][]float32, _ float32) { ReLUGrad(d, in[0], in[1]) })
}

func FuzzAXPY(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte, off uint8, p uint64) {
		in := split(boundedFloats(b, off, 1e6), 2)
		a := param(uint32(p), -1e3, 1e3)
		bothLevels(func(l int) {
			d := append([]float32(nil), in[0]...)
			AXPY(d, in[1], a)
			for i, got := range d {
				q := float64(a) * float64(in[1][i])
				want := float64(in[0][i]) + q
				if !(math.Abs(float64(got)-want) <= eps32*(math.Abs(want)+math.Abs(q))) {
					t.Fatalf("%s: AXPY [%d] = %g, want %g", levelNames[l], i, got, want)
				}
			}
		})
	})
}

func FuzzErf(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte, off uint8, _ uint64) {
		x := rawFloats(b, off)
		bothLevels(func(l int) {
			d := make([]float32, len(x))
			Erf(d, x)
			for i, v := range x {
				checkErfValue(t, levelNames[l], v, d[i])
			}
		})
	})
}

func FuzzGELU(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte, off uint8, p uint64) {
		x := rawFloats(b, off)
		bothLevels(func(l int) {
			y, d := make([]float32, len(x)), make([]float32, len(x))
			switch p % 4 {
			case 0:
				GELUAndDeriv(y, d, x)
			case 3:
				GELUAndDerivStreaming(y, d, x)
				StoreFence()
			case 1:
				GELU(y, x)
				GELUDeriv(d, x)
			default:
				copy(y, x)
				copy(d, x)
				GELU(y, y)
				GELUDeriv(d, d)
			}
			for i, v := range x {
				checkGELUValue(t, levelNames[l], v, y[i], d[i])
			}
		})
	})
}

// lnFuzzInputs decodes x, dy, w, b and the row statistics.
func lnFuzzInputs(b []byte, off uint8, p uint64) (x, dy, w, bias []float32, mean, rstd, a, c float32) {
	in := split(boundedFloats(b, off, 100), 4)
	return in[0], in[1], in[2], in[3], param(uint32(p), -50, 50), param(uint32(p>>32), 1e-3, 1e3), param(uint32(p>>16), -10, 10), param(uint32(p>>8), -10, 10)
}

func FuzzLayerNormRow(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte, off uint8, p uint64) {
		x, _, w, bias, mean, rstd, _, _ := lnFuzzInputs(b, off, p)
		bothLevels(func(l int) {
			y := make([]float32, len(x))
			LayerNormRow(y, x, w, bias, mean, rstd)
			for j, v := range x {
				xh := float64(v-mean) * float64(rstd)
				want := xh*float64(w[j]) + float64(bias[j])
				if tol := 4 * eps32 * (math.Abs(xh*float64(w[j])) + math.Abs(float64(bias[j]))); !(math.Abs(float64(y[j])-want) <= tol) {
					t.Fatalf("%s: LayerNormRow [%d] = %g, want %g", levelNames[l], j, y[j], want)
				}
			}
		})
	})
}

func FuzzLayerNormGradSums(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte, off uint8, p uint64) {
		x, dy, w, _, mean, rstd, _, _ := lnFuzzInputs(b, off, p)
		var sg, sgx, mg, mgx float64
		for j, v := range x {
			xh := float64(v-mean) * float64(rstd)
			g := float64(dy[j]) * float64(w[j])
			sg, mg = sg+g, mg+math.Abs(g)
			sgx, mgx = sgx+g*xh, mgx+math.Abs(g*xh)
		}
		bothLevels(func(l int) {
			gotSg, gotSgx := LayerNormGradSums(x, dy, w, mean, rstd)
			if !(math.Abs(float64(gotSg)-sg) <= sumTol(len(x), mg)) || !(math.Abs(float64(gotSgx)-sgx) <= 3*sumTol(len(x), mgx)) {
				t.Fatalf("%s: LayerNormGradSums = %g, %g, want %g, %g", levelNames[l], gotSg, gotSgx, sg, sgx)
			}
		})
	})
}

func FuzzLayerNormGradRow(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte, off uint8, p uint64) {
		x, dy, w, _, mean, rstd, a, c := lnFuzzInputs(b, off, p)
		bothLevels(func(l int) {
			dx := make([]float32, len(x))
			LayerNormGradRow(dx, x, dy, w, mean, rstd, a, c)
			for j, v := range x {
				xh := float64(v-mean) * float64(rstd)
				g := float64(dy[j]) * float64(w[j])
				want := float64(rstd) * (g - float64(a) - xh*float64(c))
				tol := 6 * eps32 * float64(rstd) * (math.Abs(g) + math.Abs(float64(a)) + math.Abs(xh*float64(c)))
				if !(math.Abs(float64(dx[j])-want) <= tol) {
					t.Fatalf("%s: LayerNormGradRow [%d] = %g, want %g", levelNames[l], j, dx[j], want)
				}
			}
		})
	})
}

func FuzzLayerNormGradWeightAcc(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte, off uint8, p uint64) {
		x, dy, w, _, mean, rstd, _, _ := lnFuzzInputs(b, off, p)
		bothLevels(func(l int) {
			acc := make([]float64, len(x))
			for j := range acc {
				acc[j] = float64(w[j])
			}
			LayerNormGradWeightAcc(acc, x, dy, mean, rstd)
			for j, v := range x {
				q := float64(dy[j]) * float64(v-mean) * float64(rstd)
				want := float64(w[j]) + q
				if !(math.Abs(acc[j]-want) <= 3*eps32*math.Abs(q)+1e-15*math.Abs(want)) {
					t.Fatalf("%s: LayerNormGradWeightAcc [%d] = %g, want %g", levelNames[l], j, acc[j], want)
				}
			}
		})
	})
}

func FuzzAdamW(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte, off uint8, p uint64) {
		in := split(boundedFloats(b, off, 10), 4)
		for i, v := range in[3] {
			in[3][i] = v * v // v ≥ 0
		}
		b1, b2 := param(uint32(p), 0, 0.999), param(uint32(p>>32), 0, 0.9999)
		c := AdamWCoef{
			Beta1: b1, OneMinusBeta1: 1 - b1, Beta2: b2, OneMinusBeta2: 1 - b2,
			Eps: param(uint32(p>>8), 0, 1e-6), InvSqrtBC2: param(uint32(p>>16), 1, 100),
			DecayMul: param(uint32(p>>24), 0.9, 1), StepSize: param(uint32(p>>40), 0, 1),
			GradScale: param(uint32(p>>48), 0, 1),
		}
		var want [3][]float32
		bothLevels(func(l int) {
			pp, m, v := append([]float32(nil), in[0]...), append([]float32(nil), in[2]...), append([]float32(nil), in[3]...)
			AdamW(pp, in[1], m, v, c)
			if want[0] == nil {
				want = [3][]float32{pp, m, v}
				return
			}
			for i := range pp {
				if !sameBits(pp[i], want[0][i]) || !sameBits(m[i], want[1][i]) || !sameBits(v[i], want[2][i]) {
					t.Fatalf("%s: AdamW [%d] = %g, %g, %g, generic %g, %g, %g", levelNames[l], i, pp[i], m[i], v[i], want[0][i], want[1][i], want[2][i])
				}
			}
		})
	})
}

func FuzzSumSquares64(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte, off uint8, _ uint64) {
		x := rawFloats(b, off)
		want := sumSquaresRef(x)
		bothLevels(func(l int) {
			if got := SumSquares64(x); math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("%s: SumSquares64 = %v, want %v", levelNames[l], got, want)
			}
			for i, got := range SumSquares64x4(x, x, x, x) {
				if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
					t.Fatalf("%s: SumSquares64x4's sum %d = %v, want %v", levelNames[l], i, got, want)
				}
			}
		})
	})
}
