//go:build amd64 && !purego

package jpeg

import "golang.org/x/sys/cpu"

func init() {
	if cpu.X86.HasAVX2 {
		idctBlock = idctBlockAVX2
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
