//go:build amd64 && !purego

package augment

import "golang.org/x/sys/cpu"

func init() {
	if cpu.X86.HasAVX2 {
		affineBicubicRow = affineBicubicAVX2
	}
}

// affineBicubicAVX2 is affinePixels's bicubic on a row's first n pixels
// (a positive multiple of 4), four at a time (affine_amd64.s).
//
//go:noescape
func affineBicubicAVX2(dst *uint8, dstPlane int, src *float32, srcPlane, wp int, k *[8]float64, n, channels int, fill *float64)
