//go:build !openblas

package blas

import "testing"

// benchKernel is a float32 kernel a benchmark can select.
type benchKernel struct {
	name string
	use  func(b *testing.B)
}

// benchKernels lists this build's kernels: the assembly ones the CPU runs
// ("go-avx512", "go-avx2") and "gonum".
func benchKernels() []benchKernel {
	var ks []benchKernel
	for _, k := range append(cpuKernels(), nil) {
		name := "gonum"
		if k != nil {
			name = "go-" + k.name
		}
		ks = append(ks, benchKernel{name, func(b *testing.B) { useKernel(b, k) }})
	}
	return ks
}
