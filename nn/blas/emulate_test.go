//go:build !openblas

package blas

import "math"

// The reference arithmetic of the low-precision products, in pure Go:
// what the kernels must compute bit for bit.

// fmaOdd returns x·y + z rounded to float64 to odd (an inexact result
// gets the neighbour whose last mantissa bit is 1). x·y is exact in
// float64, and a result rounded to odd with 29 bits to spare rounds to
// float32 (or float16) as the exact value would: fmaOdd then a conversion
// is a correctly rounded fused multiply-add.
func fmaOdd(x, y, z float32) float64 {
	p, w := float64(x)*float64(y), float64(z)
	s := p + w
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return s
	}
	// TwoSum: e is the exact error of s = p + w.
	bv := s - p
	e := (p - (s - bv)) + (w - bv)
	if e != 0 && math.Float64bits(s)&1 == 0 {
		s = math.Nextafter(s, math.Copysign(math.Inf(1), e))
	}
	return s
}

// fma32 is x·y + z rounded once to float32, to nearest even: VFMADD…PS.
func fma32(x, y, z float32) float32 { return float32(fmaOdd(x, y, z)) }

// daz32 is x with a denormal read as a zero of its sign.
func daz32(x float32) float32 {
	if b := math.Float32bits(x); b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return x
}

// dotStep is one of VDPBF16PS's two multiply-adds in a lane (Intel SDM,
// VDPBF16PS: "FP32 FMA with daz in, ftz out and RNE rounding"): acc + x·y
// rounded to nearest even, denormal inputs read as zero, and a result
// that is tiny after rounding (x86 detects tininess after rounding, with
// an unbounded exponent) flushed to a zero of its sign.
func dotStep(acc, x, y float32) float32 {
	s := fmaOdd(daz32(x), daz32(y), daz32(acc))
	// Rounded to 24 bits with the exponent unbounded: scaled into
	// float32's normal range first, where a tiny s still lands below
	// 2^-62 (rounding is monotonic).
	if s != 0 && !math.IsNaN(s) && math.Abs(float64(float32(s*0x1p64))) < 0x1p-62 {
		return float32(math.Copysign(0, s))
	}
	return float32(s)
}

// dpbf16 is VDPBF16PS on one lane: acc plus the products of the pairs
// (a, b), the high (odd) product first, then the low (even) one.
func dpbf16(acc float32, a, b uint32) float32 {
	acc = dotStep(acc, fromBF16(uint16(a>>16)), fromBF16(uint16(b>>16)))
	return dotStep(acc, fromBF16(uint16(a)), fromBF16(uint16(b)))
}

// emulateGemm computes C = alpha·op(A)·op(B) + beta·C + 1·biasᵀ (bias nil
// for none) as the low-precision kernels do: K blocks of kc steps, each
// block's sum acc (from zero, block(acc, i, j, p0, p1) adding steps
// [p0, p1)) stored as the kernels' epilogue stores it, the first block
// with beta and the bias, the later ones adding theirs:
//
//	beta = 0:  C = alpha·acc, or fma(alpha, acc, bias)
//	otherwise: C = fma(alpha, acc, beta·C) (+ bias)
//
// k = 0 or alpha = 0 sets C = beta·C + bias (beta = 0: bias alone).
func emulateGemm(m, n, k, kc int, alpha, beta float32, c []float32, ldc int, bias []float32, block func(acc float32, i, j, p0, p1 int) float32) {
	for i := range m {
		for j := range n {
			cij := &c[i*ldc+j]
			var bj float32
			if bias != nil {
				bj = bias[j]
			}
			if k == 0 || alpha == 0 {
				switch beta {
				case 0:
					*cij = 0
				case 1:
				default:
					*cij *= beta
				}
				if bias != nil {
					*cij += bj
				}
				continue
			}
			for pc := 0; pc < k; pc += kc {
				acc := block(0, i, j, pc, min(pc+kc, k))
				switch {
				case pc > 0:
					*cij = fma32(alpha, acc, *cij)
				case beta == 0 && bias == nil:
					*cij = alpha * acc
				case beta == 0:
					*cij = fma32(alpha, acc, bj)
				default:
					t := fma32(alpha, acc, beta**cij)
					if bias != nil {
						t += bj
					}
					*cij = t
				}
			}
		}
	}
}

// opAt returns element (r, c) of op(X) stored with stride ld.
func opAt(x []float32, ld int, trans bool, r, c int) float32 {
	if trans {
		return x[c*ld+r]
	}
	return x[r*ld+c]
}

// emulateBF16 is GemmAs(BF16, …) with K blocks of kc steps: op(A) and
// op(B) rounded to bfloat16, each block summed pair by pair with
// VDPBF16PS's rounding (a last odd step paired with zero).
func emulateBF16(tA, tB bool, m, n, k, kc int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32) {
	emulateGemm(m, n, k, kc, alpha, beta, c, ldc, bias, func(acc float32, i, j, p0, p1 int) float32 {
		for p := p0; p < p1; p += 2 {
			x, y := opAt(a, lda, tA, i, p), opAt(b, ldb, tB, p, j)
			var x1, y1 float32
			if p+1 < p1 {
				x1, y1 = opAt(a, lda, tA, i, p+1), opAt(b, ldb, tB, p+1, j)
			}
			acc = dpbf16(acc, bf16Pair(x, x1), bf16Pair(y, y1))
		}
		return acc
	})
}

// roundOdd32 rounds s to float32 to odd: with 13 bits to spare over
// float16's, it then rounds to float16 as s would.
func roundOdd32(s float64) float32 {
	f := float32(s)
	if float64(f) != s && !math.IsInf(float64(f), 0) && !math.IsNaN(s) && math.Float32bits(f)&1 == 0 {
		f = math.Nextafter32(f, float32(math.Copysign(math.Inf(1), s-float64(f))))
	}
	return f
}

// fma16 is VFMADD231PH on one lane: acc + x·y rounded once to float16,
// to nearest even, subnormals kept (the FP16 instructions ignore DAZ and
// FTZ).
func fma16(acc, x, y uint16) uint16 {
	return toFP16(roundOdd32(fmaOdd(fromFP16(x), fromFP16(y), fromFP16(acc))))
}

// emulateFP16 is GemmAs(FP16, …) with K blocks of kc steps: op(A) and
// op(B) rounded to float16; in each K block, runs of block steps (the
// last may be shorter) are summed in float16 from zero, step by step, and
// each run's sum is widened and added to the block's float32 sum.
func emulateFP16(tA, tB bool, m, n, k, kc, block int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32) {
	emulateGemm(m, n, k, kc, alpha, beta, c, ldc, bias, func(acc float32, i, j, p0, p1 int) float32 {
		for r := p0; r < p1; r += block {
			var h uint16
			for p := r; p < min(r+block, p1); p++ {
				h = fma16(h, toFP16(opAt(a, lda, tA, i, p)), toFP16(opAt(b, ldb, tB, p, j)))
			}
			acc += fromFP16(h)
		}
		return acc
	})
}

// ftz32 is x with a denormal flushed to a zero of its sign.
func ftz32(x float32) float32 { return daz32(x) }

// tileFMA is one of TDPBF16PS's multiply-adds: x·y + acc rounded once
// to float32, to nearest even, each input denormal read as zero and a
// denormal result flushed to zero (shared/amx/README.md: the arithmetic
// that matched the hardware on 1,024,000 outputs).
func tileFMA(acc, x, y float32) float32 {
	return ftz32(float32(fmaOdd(daz32(x), daz32(y), daz32(acc))))
}

// tileAdd is x + y rounded and flushed as tileFMA rounds.
func tileAdd(x, y float32) float32 { return tileFMA(y, x, 1) }

// amxSteps is the steps of one TDPBF16PS: 16 pairs.
const amxSteps = 32

// emulateAMX is GemmAs(AMX, …), whatever its K blocks (kc is not used):
// op(A) and op(B) rounded to bfloat16; all K's steps in instructions of
// 32 from the first, the last padded with zeros; within one, the even
// and the odd steps summed in two chains of tileFMA from zero, and their
// tileAdd added to the output's sum with tileAdd; the sum goes into C as
// a single K block's.
func emulateAMX(tA, tB bool, m, n, k, _ int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32) {
	emulateGemm(m, n, k, k, alpha, beta, c, ldc, bias, func(acc float32, i, j, p0, p1 int) float32 {
		for r := p0; r < p1; r += amxSteps {
			var even, odd float32
			for p := r; p < r+amxSteps; p += 2 {
				x, y := amxOperand(a, lda, tA, i, p, p1, false), amxOperand(b, ldb, tB, p, j, p1, true)
				x1, y1 := amxOperand(a, lda, tA, i, p+1, p1, false), amxOperand(b, ldb, tB, p+1, j, p1, true)
				even = tileFMA(even, x, y)
				odd = tileFMA(odd, x1, y1)
			}
			acc = tileAdd(acc, tileAdd(even, odd))
		}
		return acc
	})
}

// amxOperand is op(A)[i, p] (or op(B)[p, j] when isB, i then being p and
// p being j) rounded to bfloat16, zero at steps from end on.
func amxOperand(x []float32, ld int, trans bool, r, c, end int, isB bool) float32 {
	step := c
	if isB {
		step = r
	}
	if step >= end {
		return 0
	}
	return fromBF16(toBF16(opAt(x, ld, trans, r, c)))
}
