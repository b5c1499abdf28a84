//go:build openblas

package blas

import "testing"

// benchKernel is a float32 kernel a benchmark can select.
type benchKernel struct {
	name string
	use  func(b *testing.B)
}

// benchKernels lists this build's kernel: OpenBLAS.
func benchKernels() []benchKernel {
	return []benchKernel{{"openblas", func(*testing.B) {}}}
}
