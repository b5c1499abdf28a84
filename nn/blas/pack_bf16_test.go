//go:build !openblas

package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bf16Specials are float32 bit patterns where rounding to bfloat16 is
// delicate: zeros, denormals, infinities, NaNs (quiet and signalling, with
// payloads), the largest finite values, and halfway cases that round to
// even either way.
var bf16Specials = []uint32{
	0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x00400000, 0x7f800000, 0xff800000,
	0x7fc00000, 0x7f800001, 0xffbfffff, 0x7fa00000, 0x7f7fffff, 0xff7fffff, 0x7f7f8000,
	0x3f808000, 0x3f818000, 0x3f807fff, 0x3f808001, 0x00800000, 0x80800000, 0x3f800000,
}

// randomFloats draws n float32 from random bits and the special patterns.
func randomFloats(rng *rand.Rand, n int) []float32 {
	f := make([]float32, n)
	for i := range f {
		b := rng.Uint32()
		if rng.IntN(4) == 0 {
			b = bf16Specials[rng.IntN(len(bf16Specials))]
		}
		f[i] = math.Float32frombits(b)
	}
	return f
}

// packedDiff describes the first element where got and want, packed
// words or float16, differ, or returns "" where they are the same.
func packedDiff[T uint16 | uint32](got, want []T) string {
	for i := range want {
		if got[i] != want[i] {
			return fmt.Sprintf("element %d is %#x, want %#x", i, got[i], want[i])
		}
	}
	return ""
}

// markedPair returns two equal buffers of size elements, each a pattern
// that a conversion must leave alone where it does not write.
func markedPair[T uint16 | uint32](size int) (got, want []T) {
	got, want = make([]T, size), make([]T, size)
	for i := range got {
		got[i] = T(uint32(i) * 0x9e3779b9)
		want[i] = got[i]
	}
	return got, want
}

// TestPackBF16 checks packBBF16, and the row-by-row conversions of op(A)
// (packARowsBF16, packATRowsBF16), for op(A) and op(B) transposed or not
// and odd and even K, against the layouts spelled out element by element
// with bf16Pair; where the processor converts in assembly, this checks
// the assembly too.
func TestPackBF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const mr, nr = 12, 32
	for _, kc := range []int{1, 2, 7, 32, 33, 70} {
		for _, rows := range []int{1, 5, mr} {
			for _, trans := range []bool{false, true} {
				// op(A) is (rows, kc) from i0 = 2, p0 = 3 of a larger matrix.
				const i0, p0 = 2, 3
				m, k := i0+rows+1, p0+kc+2
				a := randomFloats(rng, m*k)
				lda := k
				at := func(i, p int) float32 { return a[i*lda+p] }
				if trans {
					lda = m
					at = func(i, p int) float32 { return a[p*lda+i] }
				}
				pairs := ceilDiv(kc, 2)

				// op(A) row by row, as the bf16 and amx kernels read it.
				stride := pairs + 1
				dst := randomFloats(rng, rows*stride)
				name := "packARowsBF16"
				if trans {
					name = "packATRowsBF16"
					packATRowsBF16(dst, stride, a[p0*lda+i0:], lda, rows, kc, nil)
				} else {
					packARowsBF16(dst, stride, a[i0*lda+p0:], lda, rows, kc)
				}
				got, want := words(dst), make([]uint32, rows*stride)
				for i := range rows {
					want[i*stride+pairs] = got[i*stride+pairs] // not written
					for q := range pairs {
						odd := float32(0)
						if 2*q+1 < kc {
							odd = at(i0+i, p0+2*q+1)
						}
						want[i*stride+q] = bf16Pair(at(i0+i, p0+2*q), odd)
					}
				}
				if d := packedDiff(got, want); d != "" {
					t.Fatalf("%s: %s", name, d)
				}

				// op(B) is (kc, cols) from p0, j0 = 2, with cols = rows·2.
				cols := 2 * rows
				const j0 = 2
				n := j0 + cols + 3
				b := randomFloats(rng, k*n)
				ldb := n
				bt := func(p, j int) float32 { return b[p*ldb+j] }
				if trans {
					ldb = k
					bt = func(p, j int) float32 { return b[j*ldb+p] }
				}
				dst = randomFloats(rng, nr*pairs)
				packBBF16(dst, nr, b, ldb, trans, j0, cols, p0, kc)
				want = make([]uint32, nr*pairs)
				for q := range pairs {
					for j := range cols {
						odd := float32(0)
						if 2*q+1 < kc {
							odd = bt(p0+2*q+1, j0+j)
						}
						want[q*nr+j] = bf16Pair(bt(p0+2*q, j0+j), odd)
					}
				}
				if d := packedDiff(words(dst), want); d != "" {
					t.Fatalf("packBBF16: %s", d)
				}
			}
		}
	}
}

// TestBF16ConversionsMatchGo compares pairRowsBF16, rowsBF16,
// rowMajorBF16 and transRowsBF16 (the assembly where the processor converts) with their Go definitions on
// every width or length up to 70, for several row and word strides,
// leaving the words between strides alone.
func TestBF16ConversionsMatchGo(t *testing.T) {
	if !bf16Convert {
		t.Skip("this processor has no AVX512_BF16: the packing converts in Go, which TestPackBF16 checks")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	lines := words(alignedFloats(32*64 + 1)) // 64-byte aligned
	for n := range 71 {
		for _, pairs := range []int{1, 2, 5} {
			for _, pad := range []int{0, 3, 16} {
				ld, stride := n+pad, n+(pad+1)%4
				src := randomFloats(rng, 2*pairs*ld+1)
				got, want := markedPair[uint32](pairs*stride + 1)
				pairRowsBF16(got, stride, src, ld, n, pairs)
				pairRowsBF16Go(want, stride, src, ld, n, pairs)
				if d := packedDiff(got, want); d != "" {
					t.Fatalf("pairRowsBF16: %s", d)
				}
			}
		}
		// n steps of each of rows rows (up to 16 at a time in the
		// assembly), their pairs stride words apart.
		for _, rows := range []int{1, 5, 12, 16, 17, 32} {
			for _, pad := range []int{0, 1, 9} {
				ld, stride := n+pad, rows+pad%4
				src := randomFloats(rng, rows*ld+1)
				got, want := markedPair[uint32](ceilDiv(n, 2)*stride + 1)
				rowsBF16(got, stride, src, ld, rows, n)
				rowsBF16Go(want, stride, src, ld, rows, n)
				if d := packedDiff(got, want); d != "" {
					t.Fatalf("rowsBF16: %s", d)
				}
				// The same rows, their pairs in order, rows wordStride
				// words apart.
				wordStride := ceilDiv(n, 2) + pad%4
				for _, stream := range []bool{false, true} {
					got, want = markedPair[uint32](rows*wordStride + 1)
					rowMajorBF16(got, wordStride, src, ld, rows, n, stream)
					rowMajorBF16Go(want, wordStride, src, ld, rows, n)
					if d := packedDiff(got, want); d != "" {
						t.Fatalf("rowMajorBF16 (streaming %t): %s", stream, d)
					}
				}
				// Streamed, every row's runs on 64-byte boundaries.
				lineStride := ceilDiv(ceilDiv(n, 2), 16)*16 + 16
				got, want = markedPair[uint32](rows*lineStride + 1)
				onLines := lines[:len(got)]
				copy(onLines, got)
				rowMajorBF16(onLines, lineStride, src, ld, rows, n, true)
				rowMajorBF16Go(want, lineStride, src, ld, rows, n)
				if d := packedDiff(onLines, want); d != "" {
					t.Fatalf("rowMajorBF16 streaming onto 64-byte lines: %s", d)
				}
				// Columns of a (n, rows) matrix along K, the pairs
				// of each in order, columns wordStride words apart,
				// without and with their sums added to sums.
				src = randomFloats(rng, n*(rows+pad)+1)
				got, want = markedPair[uint32](rows*wordStride + 1)
				transRowsBF16(got, wordStride, src, rows+pad, rows, n, nil)
				transRowsBF16Go(want, wordStride, src, rows+pad, rows, n, nil)
				if d := packedDiff(got, want); d != "" {
					t.Fatalf("transRowsBF16: %s", d)
				}
				sums := randomFloats(rng, rows+1)
				gotSums, wantSums := slices.Clone(sums), slices.Clone(sums)
				got, want = markedPair[uint32](rows*wordStride + 1)
				transRowsBF16(got, wordStride, src, rows+pad, rows, n, gotSums[:rows])
				transRowsBF16Go(want, wordStride, src, rows+pad, rows, n, wantSums[:rows])
				if d := packedDiff(got, want); d != "" {
					t.Fatalf("transRowsBF16 summing: %s", d)
				}
				for i := range sums {
					if !sameBits(gotSums[i], wantSums[i]) {
						t.Fatalf("transRowsBF16 of %d steps of %d rows: sum %d = %v, Go %v", n, rows, i, gotSums[i], wantSums[i])
					}
				}
			}
		}
	}
}
