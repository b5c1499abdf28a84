//go:build amd64 && !openblas && !purego

package blas

import "golang.org/x/sys/cpu"

// bf16Convert says whether the packing routines convert with AVX512_BF16's
// VCVTNE2PS2BF16 (sgemm_bf16_amd64.s, from gen_sgemm.go), which rounds as
// toBF16 does: on every processor the bfloat16 kernels run on.
var bf16Convert = cpu.X86.HasAVX512BF16

// maxScatterStride keeps the scatter's indices, 15·stride, in int32.
const maxScatterStride = 1 << 26

// bf16PairsAVX512 sets dst[i] to bf16Pair(even[i], odd[i]) for i < n.
//
//go:noescape
func bf16PairsAVX512(dst *uint32, even, odd *float32, n int)

// bf16RowAVX512 sets dst[q·stride] to bf16Pair(src[2q], src[2q+1]) for
// q < pairs.
//
//go:noescape
func bf16RowAVX512(dst *uint32, stride int, src *float32, pairs int)

// pairsBF16 is pairsBF16Go, in assembly where the processor converts.
func pairsBF16(dst []uint32, even, odd []float32) {
	if !bf16Convert || odd == nil || len(dst) == 0 {
		pairsBF16Go(dst, even, odd)
		return
	}
	even, odd = even[:len(dst)], odd[:len(dst)]
	bf16PairsAVX512(&dst[0], &even[0], &odd[0], len(dst))
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
