//go:build !openblas && (!amd64 || purego)

package blas

// Without the assembly conversions, the packing routines convert in Go.

func pairRowsBF16(dst []uint32, stride int, src []float32, ld, width, pairs int) {
	pairRowsBF16Go(dst, stride, src, ld, width, pairs)
}

func rowsBF16(dst []uint32, stride int, src []float32, ld, rows, steps int) {
	rowsBF16Go(dst, stride, src, ld, rows, steps)
}

func transRowsBF16(dst []uint32, stride int, src []float32, ld, rows, steps int, sums []float32) {
	transRowsBF16Go(dst, stride, src, ld, rows, steps, sums)
}

func rowMajorBF16(dst []uint32, stride int, src []float32, ld, rows, steps int, _ bool) {
	rowMajorBF16Go(dst, stride, src, ld, rows, steps)
}

// bf16Convert is false: the packing converts in Go.
const bf16Convert = false
