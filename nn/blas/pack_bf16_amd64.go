//go:build amd64 && !openblas && !purego

package blas

import "golang.org/x/sys/cpu"

// bf16Convert says whether the packing routines convert with AVX512_BF16's
// VCVTNE2PS2BF16 (sgemm_bf16_amd64.s, from gen_sgemm.go), which rounds as
// toBF16 does: on every processor the bfloat16 kernels run on.
var bf16Convert = cpu.X86.HasAVX512BF16

// bf16PairRowsAVX512 sets dst[q·stride+j] to bf16Pair(src[2q·ld+j],
// src[(2q+1)·ld+j]) for q < pairs and j < width.
//
//go:noescape
func bf16PairRowsAVX512(dst *uint32, stride int, src *float32, ld, width, pairs int)

// bf16RowsAVX512 sets dst[q·stride+i] to bf16Pair(src[i·ld+2q],
// src[i·ld+2q+1]) (the high half zero past steps) for i < rows ≤ 16 and
// q < ⌈steps/2⌉.
//
//go:noescape
func bf16RowsAVX512(dst *uint32, stride int, src *float32, ld, rows, steps int)

// bf16RowMajorAVX512 sets dst[i·stride+q] to bf16Pair(src[i·ld+2q],
// src[i·ld+2q+1]) (the high half zero past steps) for i < rows and
// q < ⌈steps/2⌉.
//
//go:noescape
func bf16RowMajorAVX512(dst *uint32, stride int, src *float32, ld, rows, steps int)

// bf16RowMajorStreamAVX512 is bf16RowMajorAVX512 storing each whole run
// of 16 words that starts on a 64-byte boundary with a streaming
// (non-temporal) store: the caller fences (vec.StoreFence) before the
// words are read elsewhere.
//
//go:noescape
func bf16RowMajorStreamAVX512(dst *uint32, stride int, src *float32, ld, rows, steps int)

// bf16TransRowsAVX512 sets dst[i·stride+q] to bf16Pair(src[2q·ld+i],
// src[(2q+1)·ld+i]) for i < rows ≤ 16 and q < steps/2, steps a positive
// multiple of 32.
//
//go:noescape
func bf16TransRowsAVX512(dst *uint32, stride int, src *float32, ld, rows, steps int)

// bf16TransRowsSumAVX512 is bf16TransRowsAVX512 that also adds src[p·ld+i]
// to sums[i] for each step p in order, in float32, for i < rows.
//
//go:noescape
func bf16TransRowsSumAVX512(dst *uint32, stride int, src *float32, ld, rows, steps int, sums *float32)

// transRowsBF16 is transRowsBF16Go, in assembly (16 rows and 32 steps at
// a time) where the processor converts.
func transRowsBF16(dst []uint32, stride int, src []float32, ld, rows, steps int, sums []float32) {
	whole := steps &^ 31
	if !bf16Convert || rows == 0 || whole == 0 {
		transRowsBF16Go(dst, stride, src, ld, rows, steps, sums)
		return
	}
	for i0 := 0; i0 < rows; i0 += 16 {
		n := min(16, rows-i0)
		// The last word the assembly writes and the last float it reads.
		_, _ = dst[(i0+n-1)*stride+whole/2-1], src[(whole-1)*ld+i0+n-1]
		transRunsBF16(&dst[i0*stride], stride, &src[i0], ld, n, whole, sums, i0)
	}
	if whole < steps {
		transRowsTail(dst[whole/2:], stride, src[whole*ld:], ld, rows, steps-whole, sums)
	}
}

// transRunsBF16 converts, and where sums is not nil sums, n ≤ 16 rows
// from row i0 over steps, a multiple of 32, in the assembly.
func transRunsBF16(dst *uint32, stride int, src *float32, ld, n, steps int, sums []float32, i0 int) {
	if sums == nil {
		bf16TransRowsAVX512(dst, stride, src, ld, n, steps)
		return
	}
	_ = sums[i0+n-1]
	bf16TransRowsSumAVX512(dst, stride, src, ld, n, steps, &sums[i0])
}

// transRowsTail is transRowsBF16 for fewer than 32 steps: 16 columns at
// a time, the steps are copied into 32 zero-padded ones, converted (and
// summed: adding the zeros changes no sum) by the assembly into 16 words
// a row, and each row's first ⌈steps/2⌉ words copied out.
func transRowsTail(dst []uint32, stride int, src []float32, ld, rows, steps int, sums []float32) {
	var in [32 * 16]float32
	var out [16 * 16]uint32
	for i0 := 0; i0 < rows; i0 += 16 {
		n := min(16, rows-i0)
		for p := range steps {
			copy(in[p*16:p*16+n], src[p*ld+i0:p*ld+i0+n])
		}
		transRunsBF16(&out[0], 16, &in[0], 16, n, 32, sums, i0)
		for i := range n {
			copy(dst[(i0+i)*stride:(i0+i)*stride+ceilDiv(steps, 2)], out[i*16:])
		}
	}
}

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

// rowsBF16 is rowsBF16Go, in assembly (16 rows at a time) where the
// processor converts.
func rowsBF16(dst []uint32, stride int, src []float32, ld, rows, steps int) {
	if !bf16Convert || rows == 0 || steps == 0 {
		rowsBF16Go(dst, stride, src, ld, rows, steps)
		return
	}
	pairs := ceilDiv(steps, 2)
	for i0 := 0; i0 < rows; i0 += 16 {
		n := min(16, rows-i0)
		// The last word the assembly writes and the last float it reads.
		_, _ = dst[(pairs-1)*stride+i0+n-1], src[(i0+n-1)*ld+steps-1]
		bf16RowsAVX512(&dst[i0], stride, &src[i0*ld], ld, n, steps)
	}
}

// rowMajorBF16 is rowMajorBF16Go, in assembly where the processor
// converts; with stream, its whole runs of 16 words that start on a
// 64-byte boundary go out with streaming stores.
func rowMajorBF16(dst []uint32, stride int, src []float32, ld, rows, steps int, stream bool) {
	if !bf16Convert || rows == 0 || steps == 0 {
		rowMajorBF16Go(dst, stride, src, ld, rows, steps)
		return
	}
	// The last word the assembly writes and the last float it reads.
	_, _ = dst[(rows-1)*stride+ceilDiv(steps, 2)-1], src[(rows-1)*ld+steps-1]
	if stream {
		bf16RowMajorStreamAVX512(&dst[0], stride, &src[0], ld, rows, steps)
		return
	}
	bf16RowMajorAVX512(&dst[0], stride, &src[0], ld, rows, steps)
}
