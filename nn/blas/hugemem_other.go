//go:build !linux && !openblas

package blas

// hugeFloats returns n zero floats, 64-byte aligned, from the Go heap:
// huge pages are asked for on Linux only.
func hugeFloats[T any](owner *T, n int) []float32 { return alignedFloats(n) }
