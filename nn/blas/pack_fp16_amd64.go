//go:build amd64 && !openblas && !purego

package blas

import "golang.org/x/sys/cpu"

// fp16Convert says whether the packing routines convert with AVX-512's
// VCVTPS2PH (sgemm_fp16_amd64.s, from gen_sgemm.go), which rounds as
// toFP16 does, storing float16 under AVX512BW masks: on every processor
// the float16 kernel runs on, and others, whose conversions are tested.
var fp16Convert = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW

// fp16StepRowsAVX512 sets dst[p·stride+j] to toFP16(src[p·ld+j]) for
// p < steps and j < width.
//
//go:noescape
func fp16StepRowsAVX512(dst *uint16, stride int, src *float32, ld, width, steps int)

// fp16RowsAVX512 sets dst[p·stride+i] to toFP16(src[i·ld+p]) for
// i < rows ≤ 16 and p < steps.
//
//go:noescape
func fp16RowsAVX512(dst *uint16, stride int, src *float32, ld, rows, steps int)

// stepRowsFP16 is stepRowsFP16Go, in assembly where the processor
// converts.
func stepRowsFP16(dst []uint16, stride int, src []float32, ld, width, steps int) {
	if !fp16Convert || width == 0 || steps == 0 {
		stepRowsFP16Go(dst, stride, src, ld, width, steps)
		return
	}
	// The last float16 the assembly writes and the last float it reads.
	_, _ = dst[(steps-1)*stride+width-1], src[(steps-1)*ld+width-1]
	fp16StepRowsAVX512(&dst[0], stride, &src[0], ld, width, steps)
}

// rowsFP16 is rowsFP16Go, in assembly (16 rows at a time) where the
// processor converts.
func rowsFP16(dst []uint16, stride int, src []float32, ld, rows, steps int) {
	if !fp16Convert || rows == 0 || steps == 0 {
		rowsFP16Go(dst, stride, src, ld, rows, steps)
		return
	}
	for i0 := 0; i0 < rows; i0 += 16 {
		n := min(16, rows-i0)
		// The last float16 the assembly writes and the last float it reads.
		_, _ = dst[(steps-1)*stride+i0+n-1], src[(i0+n-1)*ld+steps-1]
		fp16RowsAVX512(&dst[i0], stride, &src[i0*ld], ld, n, steps)
	}
}
