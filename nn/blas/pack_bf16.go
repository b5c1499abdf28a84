//go:build !openblas

package blas

import "unsafe"

// words views a float32 buffer as the 32-bit words a low-precision
// kernel's packed panels are made of.
func words(f []float32) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(f))), len(f))
}

// packABF16 packs rows i0..i0+rows-1, K steps p0..p0+kc-1 of op(A) into
// dst as an (mr, ⌈kc/2⌉) panel of bfloat16 pairs stored column by column:
// the word of row i and pair q, at dst[q·mr+i], holds steps p0+2q (low
// half) and p0+2q+1 (high half, zero past kc); rows past rows are zero.
func packABF16(dst []float32, mr int, a []float32, lda int, tA bool, i0, rows, p0, kc int) {
	pairs := ceilDiv(kc, 2)
	d := words(dst[:mr*pairs])
	if tA {
		// Column p of op(A) is row p0+p of A.
		for q := range pairs {
			col := d[q*mr : q*mr+rows]
			even := a[(p0+2*q)*lda+i0 : (p0+2*q)*lda+i0+rows]
			if 2*q+1 < kc {
				odd := a[(p0+2*q+1)*lda+i0 : (p0+2*q+1)*lda+i0+rows]
				for i := range col {
					col[i] = bf16Pair(even[i], odd[i])
				}
				continue
			}
			for i := range col {
				col[i] = bf16Pair(even[i], 0)
			}
		}
	} else {
		for i := range rows {
			src := a[(i0+i)*lda+p0 : (i0+i)*lda+p0+kc]
			for q := range kc / 2 {
				d[q*mr+i] = bf16Pair(src[2*q], src[2*q+1])
			}
			if kc%2 == 1 {
				d[(pairs-1)*mr+i] = bf16Pair(src[kc-1], 0)
			}
		}
	}
	for q := range pairs {
		clear(d[q*mr+rows : q*mr+mr])
	}
}

// packBBF16 packs K steps p0..p0+kc-1, columns j0..j0+cols-1 of op(B)
// into dst as a (⌈kc/2⌉, nr) panel of bfloat16 pairs stored row by row:
// the word of pair q and column j, at dst[q·nr+j], holds steps p0+2q (low
// half) and p0+2q+1 (high half, zero past kc); columns past cols are zero.
func packBBF16(dst []float32, nr int, b []float32, ldb int, tB bool, j0, cols, p0, kc int) {
	pairs := ceilDiv(kc, 2)
	d := words(dst[:nr*pairs])
	if tB {
		// Column j of op(B) is row j0+j of B: read it along K.
		for j := range cols {
			src := b[(j0+j)*ldb+p0 : (j0+j)*ldb+p0+kc]
			for q := range kc / 2 {
				d[q*nr+j] = bf16Pair(src[2*q], src[2*q+1])
			}
			if kc%2 == 1 {
				d[(pairs-1)*nr+j] = bf16Pair(src[kc-1], 0)
			}
		}
	} else {
		for q := range pairs {
			even := b[(p0+2*q)*ldb+j0 : (p0+2*q)*ldb+j0+cols]
			row := d[q*nr : q*nr+cols]
			if 2*q+1 < kc {
				odd := b[(p0+2*q+1)*ldb+j0 : (p0+2*q+1)*ldb+j0+cols]
				for j := range row {
					row[j] = bf16Pair(even[j], odd[j])
				}
				continue
			}
			for j := range row {
				row[j] = bf16Pair(even[j], 0)
			}
		}
	}
	for q := range pairs {
		clear(d[q*nr+cols : q*nr+nr])
	}
}
