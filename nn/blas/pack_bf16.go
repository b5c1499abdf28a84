//go:build !openblas

package blas

import (
	"unsafe"

	"github.com/vit-train/vit-train/nn/vec"
)

// words views a float32 buffer as the 32-bit words a low-precision
// kernel's packed panels are made of.
func words(f []float32) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(f))), len(f))
}

// packBBF16 packs K steps p0..p0+kc-1, columns j0..j0+cols-1 of op(B)
// into dst as a (⌈kc/2⌉, nr) panel of bfloat16 pairs stored row by row:
// the word of pair q and column j, at dst[q·nr+j], holds steps p0+2q (low
// half) and p0+2q+1 (high half, zero past kc); columns past cols are zero.
func packBBF16(dst []float32, nr int, b []float32, ldb int, tB bool, j0, cols, p0, kc int) {
	pairs := ceilDiv(kc, 2)
	d := words(dst[:nr*pairs])
	if tB {
		// Column j of op(B) is row j0+j of B, along K: its pairs go nr
		// words apart.
		rowsBF16(d, nr, b[j0*ldb+p0:], ldb, cols, kc)
	} else {
		// Row p of op(B) is row p0+p of B: pair two rows of B.
		stepRowsBF16(d, nr, b[p0*ldb+j0:], ldb, cols, kc)
	}
	for q := range pairs {
		clear(d[q*nr+cols : q*nr+nr])
	}
}

// packBAMX is packBBF16 for the AMX kernel: dst is a whole panel of
// kernelAMX.rows(kc) pairs, those past ⌈kc/2⌉ zero.
func packBAMX(dst []float32, nr int, b []float32, ldb int, tB bool, j0, cols, p0, kc int) {
	packBBF16(dst, nr, b, ldb, tB, j0, cols, p0, kc)
	clear(dst[nr*ceilDiv(kc, 2):])
}

// packATRowsBF16 converts rows rows of op(A) = Aᵀ, where A is row-major
// with row stride lda and row r of op(A) is column r of A (a[r + p·lda]
// for step p), to bfloat16 pairs along K: the pair of steps 2q and 2q+1
// (zero past k) of row r at dst[r·stride+q]. Where sums is not nil, it
// adds each of row r's k steps in order, in float32, to sums[r].
func packATRowsBF16(dst []float32, stride int, a []float32, lda, rows, k int, sums []float32) {
	transRowsBF16(words(dst), stride, a, lda, rows, k, sums)
}

// transRowsBF16Go sets dst[i·stride+q] to the bfloat16 pair
// (src[2q·ld+i], src[(2q+1)·ld+i]) for i < rows and q < ⌈steps/2⌉, the
// high half zero past steps: columns of a row-major matrix (row stride
// ld) along K, each column's pairs in order. Where sums is not nil, it
// adds src[p·ld+i] to sums[i] for each step p in order.
func transRowsBF16Go(dst []uint32, stride int, src []float32, ld, rows, steps int, sums []float32) {
	for q := range ceilDiv(steps, 2) {
		even, odd := src[2*q*ld:2*q*ld+rows], []float32(nil)
		if 2*q+1 < steps {
			odd = src[(2*q+1)*ld : (2*q+1)*ld+rows]
		}
		for i, x := range even {
			y := float32(0)
			if odd != nil {
				y = odd[i]
			}
			dst[i*stride+q] = bf16Pair(x, y)
		}
		if sums != nil {
			vec.Add(sums[:rows], sums[:rows], even)
			if odd != nil {
				vec.Add(sums[:rows], sums[:rows], odd)
			}
		}
	}
}

// pairRowsBF16Go sets dst[q·stride+j] to the bfloat16 pair
// (src[2q·ld+j], src[(2q+1)·ld+j]) for q < pairs and j < width: pairs of
// rows of a row-major matrix (row stride ld), each pair's words stride
// apart.
func pairRowsBF16Go(dst []uint32, stride int, src []float32, ld, width, pairs int) {
	for q := range pairs {
		even, odd := src[2*q*ld:2*q*ld+width], src[(2*q+1)*ld:(2*q+1)*ld+width]
		row := dst[q*stride : q*stride+width]
		for j := range row {
			row[j] = bf16Pair(even[j], odd[j])
		}
	}
}

// stepRowsBF16 packs steps K steps that are rows of a row-major matrix
// (row stride ld), width columns each, in pairs: dst[q·stride+j] holds
// src[2q·ld+j] (low half) and src[(2q+1)·ld+j] (high half, zero past
// steps) for q < ⌈steps/2⌉ and j < width.
func stepRowsBF16(dst []uint32, stride int, src []float32, ld, width, steps int) {
	pairRowsBF16(dst, stride, src, ld, width, steps/2)
	if steps%2 == 1 {
		last, row := dst[steps/2*stride:steps/2*stride+width], src[(steps-1)*ld:]
		for j := range last {
			last[j] = bf16Pair(row[j], 0)
		}
	}
}

// rowsBF16Go sets dst[q·stride+i] to the bfloat16 pair (src[i·ld+2q],
// src[i·ld+2q+1]) for i < rows and q < ⌈steps/2⌉, the high half zero past
// steps: rows of a row-major matrix (row stride ld) along K, each pair's
// words stride apart.
func rowsBF16Go(dst []uint32, stride int, src []float32, ld, rows, steps int) {
	for i := range rows {
		row := src[i*ld : i*ld+steps]
		for q := range steps / 2 {
			dst[q*stride+i] = bf16Pair(row[2*q], row[2*q+1])
		}
		if steps%2 == 1 {
			dst[steps/2*stride+i] = bf16Pair(row[steps-1], 0)
		}
	}
}

// packARowsBF16 converts rows rows of a row-major A (row stride lda), k
// steps each, to bfloat16 pairs in the same order, the kernel reading
// them in place: the pair of steps 2q and 2q+1 (zero past k) of row i at
// dst[i·stride+q].
func packARowsBF16(dst []float32, stride int, a []float32, lda, rows, k int) {
	rowMajorBF16(words(dst), stride, a, lda, rows, k, false)
}

// streamARowsBF16 is packARowsBF16 with streaming stores where the
// processor converts.
func streamARowsBF16(dst []float32, stride int, a []float32, lda, rows, k int) {
	rowMajorBF16(words(dst), stride, a, lda, rows, k, true)
}

// rowMajorBF16Go sets dst[i·stride+q] to the bfloat16 pair (src[i·ld+2q],
// src[i·ld+2q+1]) for i < rows and q < ⌈steps/2⌉, the high half zero past
// steps.
func rowMajorBF16Go(dst []uint32, stride int, src []float32, ld, rows, steps int) {
	for i := range rows {
		rowsBF16Go(dst[i*stride:], 1, src[i*ld:], ld, 1, steps)
	}
}
