//go:build amd64 && !purego

package augment

import "golang.org/x/sys/cpu"

func init() {
	if cpu.X86.HasAVX2 {
		affineBicubicRow = affineBicubicAVX2
		floatLevels = floatLevelsWithAVX2
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL {
		affineBicubicRow, affineBicubicGroup = affineBicubicAVX512, 8
	}
}

// affineBicubicAVX2 is affinePixels's bicubic on a row's first n pixels
// (a positive multiple of 4), four at a time (affine_amd64.s).
//
//go:noescape
func affineBicubicAVX2(dst *uint8, dstPlane int, src *float32, srcPlane, wp int, k *[8]float64, n, channels int, fill *float64)

// affineBicubicAVX512 is affineBicubicAVX2 on eight pixels at a time (n a
// positive multiple of 8), in AVX-512 registers (affine_amd64.s).
//
//go:noescape
func affineBicubicAVX512(dst *uint8, dstPlane int, src *float32, srcPlane, wp int, k *[8]float64, n, channels int, fill *float64)

// floatLevelsAVX2 is floatLevelsGeneric on n (a positive multiple of 8)
// levels (affine_amd64.s).
//
//go:noescape
func floatLevelsAVX2(dst *float32, src *uint8, n int)

func floatLevelsWithAVX2(dst []float32, src []uint8) {
	n := len(src) &^ 7
	if n > 0 {
		_ = dst[n-1]
		floatLevelsAVX2(&dst[0], &src[0], n)
	}
	floatLevelsGeneric(dst[n:], src[n:])
}
