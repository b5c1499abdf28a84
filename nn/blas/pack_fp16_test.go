//go:build !openblas

package blas

import (
	"math"
	"math/rand/v2"
	"testing"
)

// fp16Floats draws n float32 where rounding to float16 is delicate: the
// float16 values themselves, the midpoints between neighbours and the
// floats on either side of them (ties to even, the subnormals, 65520 and
// up to infinity), random bits (far outside float16's range, NaNs with
// payloads) and the bfloat16 special patterns.
func fp16Floats(rng *rand.Rand, n int) []float32 {
	f := make([]float32, n)
	for i := range f {
		h := uint16(rng.Uint32())
		x := fromFP16(h)
		switch rng.IntN(6) {
		case 0:
			f[i] = math.Float32frombits(rng.Uint32())
			continue
		case 1:
			f[i] = math.Float32frombits(bf16Specials[rng.IntN(len(bf16Specials))])
			continue
		case 2:
			f[i] = x
			continue
		}
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			f[i] = x
			continue
		}
		next := float64(fromFP16(h + 1))
		if h&0x7fff == 0x7bff { // the largest finite: its midpoint is 65520
			next = math.Copysign(65536, float64(x))
		}
		mid := float32((float64(x) + next) / 2)
		switch rng.IntN(3) {
		case 0:
			f[i] = mid
		case 1:
			f[i] = math.Nextafter32(mid, 0)
		default:
			f[i] = math.Nextafter32(mid, float32(math.Copysign(math.Inf(1), float64(mid))))
		}
	}
	return f
}

// TestPackFP16 checks packAFP16 and packBFP16, for op(A) and op(B)
// transposed or not, against the panel layout spelled out element by
// element with toFP16; where the processor converts in assembly, this
// checks the assembly too.
func TestPackFP16(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const mr, nr = 8, 32
	for _, kc := range []int{1, 2, 7, 16, 17, 40} {
		for _, rows := range []int{1, 5, mr} {
			for _, trans := range []bool{false, true} {
				// op(A) is (rows, kc) from i0 = 2, p0 = 3 of a larger matrix.
				const i0, p0 = 2, 3
				m, k := i0+rows+1, p0+kc+2
				a := fp16Floats(rng, m*k)
				lda := k
				at := func(i, p int) float32 { return a[i*lda+p] }
				if trans {
					lda = m
					at = func(i, p int) float32 { return a[p*lda+i] }
				}
				dst := fp16Floats(rng, mr/2*kc)
				packAFP16(dst, mr, a, lda, trans, i0, rows, p0, kc)
				want := make([]uint16, mr*kc)
				for p := range kc {
					for i := range rows {
						want[p*mr+i] = toFP16(at(i0+i, p0+p))
					}
				}
				if d := packedDiff(halves(dst), want); d != "" {
					t.Fatalf("packAFP16: %s", d)
				}

				// op(B) is (kc, cols) from p0, j0 = 2, with cols = rows·4.
				cols := 4 * rows
				const j0 = 2
				n := j0 + cols + 3
				b := fp16Floats(rng, k*n)
				ldb := n
				bt := func(p, j int) float32 { return b[p*ldb+j] }
				if trans {
					ldb = k
					bt = func(p, j int) float32 { return b[j*ldb+p] }
				}
				dst = fp16Floats(rng, nr/2*kc)
				packBFP16(dst, nr, b, ldb, trans, j0, cols, p0, kc)
				want = make([]uint16, nr*kc)
				for p := range kc {
					for j := range cols {
						want[p*nr+j] = toFP16(bt(p0+p, j0+j))
					}
				}
				if d := packedDiff(halves(dst), want); d != "" {
					t.Fatalf("packBFP16: %s", d)
				}
			}
		}
	}
}

// TestFP16ConversionsMatchGo compares stepRowsFP16 and rowsFP16 (the
// assembly, VCVTPS2PH, where the processor converts) with their Go
// definitions, which round with toFP16, on every width or length up to
// 40 and several strides, leaving the float16 between strides alone. On a
// processor with AVX-512 this checks toFP16 against the instruction on
// float16's delicate values.
func TestFP16ConversionsMatchGo(t *testing.T) {
	if !fp16Convert {
		t.Skip("this processor has no AVX-512 (with AVX512BW): the packing converts in Go, which TestPackFP16 checks")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for n := 1; n <= 40; n++ {
		for _, count := range []int{1, 5, 12, 16, 17, 32} {
			for _, pad := range []int{0, 1, 9} {
				// count steps of n floats, their float16 stride apart.
				ld, stride := n+pad, n+pad%4
				src := fp16Floats(rng, count*ld+1)
				got, want := markedPair[uint16](count*stride + 1)
				stepRowsFP16(got, stride, src, ld, n, count)
				stepRowsFP16Go(want, stride, src, ld, n, count)
				if d := packedDiff(got, want); d != "" {
					t.Fatalf("stepRowsFP16: %s", d)
				}
				// count rows of n steps, transposed.
				stride = count + pad%4
				got, want = markedPair[uint16](n*stride + 1)
				rowsFP16(got, stride, src, ld, count, n)
				rowsFP16Go(want, stride, src, ld, count, n)
				if d := packedDiff(got, want); d != "" {
					t.Fatalf("rowsFP16: %s", d)
				}
			}
		}
	}
}
