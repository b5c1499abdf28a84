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
	if tA {
		// Column p of op(A) is row p0+p of A.
		stepRowsFP16(h, mr, a[p0*lda+i0:], lda, rows, kc)
	} else {
		// Row i of op(A) runs along K: its steps go mr apart.
		rowsFP16(h, mr, a[i0*lda+p0:], lda, rows, kc)
	}
	for p := range kc {
		clear(h[p*mr+rows : p*mr+mr])
	}
}

// packBFP16 packs K steps p0..p0+kc-1, columns j0..j0+cols-1 of op(B)
// into dst as a (kc, nr) panel of float16 stored row by row: element
// (p, j) at half p·nr+j of dst; columns past cols are zero. nr is even.
func packBFP16(dst []float32, nr int, b []float32, ldb int, tB bool, j0, cols, p0, kc int) {
	h := halves(dst[:nr/2*kc])
	if tB {
		// Column j of op(B) is row j0+j of B, along K.
		rowsFP16(h, nr, b[j0*ldb+p0:], ldb, cols, kc)
	} else {
		// Row p of op(B) is row p0+p of B.
		stepRowsFP16(h, nr, b[p0*ldb+j0:], ldb, cols, kc)
	}
	for p := range kc {
		clear(h[p*nr+cols : p*nr+nr])
	}
}

// stepRowsFP16Go sets dst[p·stride+j] to toFP16(src[p·ld+j]) for
// p < steps and j < width: K steps that are rows of a row-major matrix
// (row stride ld), each step's float16 stride apart.
func stepRowsFP16Go(dst []uint16, stride int, src []float32, ld, width, steps int) {
	for p := range steps {
		row := dst[p*stride : p*stride+width]
		for j, v := range src[p*ld : p*ld+width] {
			row[j] = toFP16(v)
		}
	}
}

// rowsFP16Go sets dst[p·stride+i] to toFP16(src[i·ld+p]) for i < rows
// and p < steps: rows of a row-major matrix along K, each step's float16
// stride apart.
func rowsFP16Go(dst []uint16, stride int, src []float32, ld, rows, steps int) {
	for i := range rows {
		for p, v := range src[i*ld : i*ld+steps] {
			dst[p*stride+i] = toFP16(v)
		}
	}
}
