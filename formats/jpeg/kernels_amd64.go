//go:build amd64 && !purego

package jpeg

import "golang.org/x/sys/cpu"

func init() {
	if cpu.X86.HasAVX2 {
		idctBlock = idctBlockAVX2
		ycbcrRow = ycbcrRowAVX2
		ycbcrHalfRow = ycbcrHalfRowAVX2
	}
}

// idctAVX2 is idctBlockGeneric in AVX2 (idct_amd64.s, written by
// scripts/gen_jpeg_idct.py); dst must hold 7·stride+8 bytes.
//
//go:noescape
func idctAVX2(coef *[blockSize]int16, q *[blockSize]int32, dst *byte, stride int)

func idctBlockAVX2(coef *[blockSize]int16, q *[blockSize]int32, dst []byte, stride int) {
	_ = dst[7*stride+7]
	idctAVX2(coef, q, &dst[0], stride)
}

// ycbcrAVX2 converts n pixels (a positive multiple of 8) from YCbCr to
// planar RGB as ycbcrRowGeneric does (ycbcr_amd64.s); with half, each
// chroma sample covers two pixels.
//
//go:noescape
func ycbcrAVX2(y, cb, cr, rd, gd, bd *byte, n int, half bool)

func ycbcrRowAVX2(y, cb, cr, r, g, b []byte) {
	n := len(y) &^ 7
	if n > 0 {
		_, _, _, _, _ = cb[n-1], cr[n-1], r[n-1], g[n-1], b[n-1]
		ycbcrAVX2(&y[0], &cb[0], &cr[0], &r[0], &g[0], &b[0], n, false)
	}
	ycbcrRowGeneric(y[n:], cb[n:], cr[n:], r[n:], g[n:], b[n:])
}

func ycbcrHalfRowAVX2(y, cb, cr, r, g, b []byte) {
	n := len(y) &^ 7
	if n > 0 {
		_, _, _, _, _ = cb[n/2-1], cr[n/2-1], r[n-1], g[n-1], b[n-1]
		ycbcrAVX2(&y[0], &cb[0], &cr[0], &r[0], &g[0], &b[0], n, true)
	}
	ycbcrHalfRowGeneric(y[n:], cb[n/2:], cr[n/2:], r[n:], g[n:], b[n:])
}
