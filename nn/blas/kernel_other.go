//go:build (!amd64 || purego) && !openblas

package blas

// cpuKernels lists the assembly kernels this CPU runs: none on this build,
// where sgemm is gonum's.
func cpuKernels() []*kernel { return nil }

// lowKernel returns nil: this build has no low-precision kernel.
func lowKernel(v Variant) *kernel { return nil }

// allKernels lists every kernel of this build.
func allKernels() []*kernel { return nil }

// prefetchRows does nothing on this build.
func prefetchRows(p *float32, stride, rows, width int) {}
