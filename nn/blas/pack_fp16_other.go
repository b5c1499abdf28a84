//go:build !openblas && (!amd64 || purego)

package blas

// Without the assembly conversions, the float16 packing converts in Go.

func stepRowsFP16(dst []uint16, stride int, src []float32, ld, width, steps int) {
	stepRowsFP16Go(dst, stride, src, ld, width, steps)
}

func rowsFP16(dst []uint16, stride int, src []float32, ld, rows, steps int) {
	rowsFP16Go(dst, stride, src, ld, rows, steps)
}

// fp16Convert is false: the packing converts in Go.
const fp16Convert = false
