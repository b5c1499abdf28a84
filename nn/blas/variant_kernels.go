//go:build !openblas

package blas

// panelKernel is the kernel a PackedB's panels are packed for.
type panelKernel = kernel

// activePanels is the kernel PackB packs for: the active float32 kernel,
// nil for gonum's products.
func activePanels() *kernel { return active }

// variantPanels is the kernel PackBAs packs for v, which runs here.
func variantPanels(v Variant) *kernel { return lowKernel(v) }

func variantRuns(v Variant) bool { return lowKernel(v) != nil }

// variantGemmThen computes GemmAs's product in v's kernel, calling then
// (nil: none) on each row strip of C as the kernel finishes it.
func variantGemmThen(v Variant, tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32, then Then) {
	sgemmKernelThen(lowKernel(v), tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, bias, then)
}
