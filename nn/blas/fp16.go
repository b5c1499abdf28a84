//go:build !openblas

package blas

import "unsafe"

// fp16Block is how many K steps the float16 kernel sums in float16
// before widening the sum to float32 (TestFP16BlockError measures the
// choice).
const fp16Block = 32

// halves views a float32 buffer as the float16 values of a float16
// kernel's packed panels, two a word.
func halves(f []float32) []uint16 {
	return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(f))), 2*len(f))
}

// packAFP16 packs rows i0..i0+rows-1, K steps p0..p0+kc-1 of op(A) into
// dst as an (mr, kc) panel of float16 stored column by column: element
// (i, p) at half p·mr+i of dst; rows past rows are zero. mr is even.
func packAFP16(dst []float32, mr int, a []float32, lda int, tA bool, i0, rows, p0, kc int) {
	h := halves(dst[:mr/2*kc])
	for p := range kc {
		col := h[p*mr : p*mr+mr]
		if tA {
			for i, v := range a[(p0+p)*lda+i0 : (p0+p)*lda+i0+rows] {
				col[i] = toFP16(v)
			}
		} else {
			for i := range rows {
				col[i] = toFP16(a[(i0+i)*lda+p0+p])
			}
		}
		clear(col[rows:])
	}
}

// packBFP16 packs K steps p0..p0+kc-1, columns j0..j0+cols-1 of op(B)
// into dst as a (kc, nr) panel of float16 stored row by row: element
// (p, j) at half p·nr+j of dst; columns past cols are zero. nr is even.
func packBFP16(dst []float32, nr int, b []float32, ldb int, tB bool, j0, cols, p0, kc int) {
	h := halves(dst[:nr/2*kc])
	for p := range kc {
		row := h[p*nr : p*nr+nr]
		if tB {
			for j := range cols {
				row[j] = toFP16(b[(j0+j)*ldb+p0+p])
			}
		} else {
			for j, v := range b[(p0+p)*ldb+j0 : (p0+p)*ldb+j0+cols] {
				row[j] = toFP16(v)
			}
		}
		clear(row[cols:])
	}
}
