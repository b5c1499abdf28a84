//go:build amd64 && !openblas && !purego

package blas

import "golang.org/x/sys/cpu"

// bf16Convert says whether the packing routines convert with AVX512_BF16's
// VCVTNE2PS2BF16 (sgemm_bf16_amd64.s, from gen_sgemm.go), which rounds as
// toBF16 does: on every processor the bfloat16 kernels run on.
var bf16Convert = cpu.X86.HasAVX512BF16

// maxScatterStride keeps the scatter's indices, 15·stride, in int32.
const maxScatterStride = 1 << 26

// bf16PairRowsAVX512 sets dst[q·stride+j] to bf16Pair(src[2q·ld+j],
// src[(2q+1)·ld+j]) for q < pairs and j < width.
//
//go:noescape
func bf16PairRowsAVX512(dst *uint32, stride int, src *float32, ld, width, pairs int)

// bf16RowAVX512 sets dst[q·stride] to bf16Pair(src[2q], src[2q+1]) for
// q < pairs.
//
//go:noescape
func bf16RowAVX512(dst *uint32, stride int, src *float32, pairs int)

// pairRowsBF16 is pairRowsBF16Go, in assembly where the processor
// converts.
func pairRowsBF16(dst []uint32, stride int, src []float32, ld, width, pairs int) {
	if !bf16Convert || pairs == 0 || width == 0 {
		pairRowsBF16Go(dst, stride, src, ld, width, pairs)
		return
	}
	// The last word the assembly writes and the last float it reads.
	_, _ = dst[(pairs-1)*stride+width-1], src[(2*pairs-1)*ld+width-1]
	bf16PairRowsAVX512(&dst[0], stride, &src[0], ld, width, pairs)
}

// rowBF16 is rowBF16Go, in assembly where the processor converts.
func rowBF16(dst []uint32, stride int, src []float32) {
	pairs := len(src) / 2
	if !bf16Convert || pairs == 0 || stride < 1 || stride > maxScatterStride {
		rowBF16Go(dst, stride, src)
		return
	}
	_ = dst[(pairs-1)*stride] // the last word the assembly writes
	bf16RowAVX512(&dst[0], stride, &src[0], pairs)
	if len(src)%2 == 1 {
		dst[pairs*stride] = bf16Pair(src[len(src)-1], 0)
	}
}
