//go:build !openblas && (!amd64 || purego)

package blas

// Without the assembly conversions, the packing routines convert in Go.

func pairsBF16(dst []uint32, even, odd []float32) { pairsBF16Go(dst, even, odd) }

func rowBF16(dst []uint32, stride int, src []float32) { rowBF16Go(dst, stride, src) }

// bf16Convert is false: the packing converts in Go.
const bf16Convert = false
