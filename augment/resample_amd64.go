//go:build amd64 && !purego

package augment

import "golang.org/x/sys/cpu"

func init() {
	if cpu.X86.HasAVX2 {
		verticalTaps = verticalTapsAVX2
		horizontalTaps8 = htapsAVX2
	}
}

// vtapsAVX2 is verticalTapsGeneric on n (a positive multiple of 8) values
// (resample_amd64.s).
//
//go:noescape
func vtapsAVX2(dst, src *float32, stride, n int, w *float32, taps int)

func verticalTapsAVX2(dst, src []float32, stride int, w []float32) {
	n := len(dst) &^ 7
	if n > 0 && len(w) > 0 {
		_ = src[(len(w)-1)*stride+n-1]
		vtapsAVX2(&dst[0], &src[0], stride, n, &w[0], len(w))
	} else {
		n = 0
	}
	verticalTapsGeneric(dst[n:], src[n:], stride, w)
}

// htapsAVX2 is horizontalTaps8Generic on n (a positive multiple of 8)
// outputs (resample_amd64.s).
//
//go:noescape
func htapsAVX2(dst *float32, outStride int, src *float32, start, size *int, w *float32, ksize, n int)
