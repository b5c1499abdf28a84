//go:build !openblas

package blas

import "github.com/vit-train/vit-train/nn/vec"

// panelKernel is the kernel a PackedB's panels are packed for.
type panelKernel = kernel

// activePanels is the kernel PackB packs for: the active float32 kernel,
// nil for gonum's products.
func activePanels() *kernel { return active }

// variantPanels is the kernel PackBAs packs for v, which runs here.
func variantPanels(v Variant) *kernel { return lowKernel(v) }

func variantRuns(v Variant) bool { return lowKernel(v) != nil }

// variantGemmThen computes GemmAs's product in v's kernel, calling then
// (nil: none) on each row strip of C as the kernel finishes it and setting
// sums (nil: none) to GemmAsSums's sums.
func variantGemmThen(v Variant, tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32, then Then, sums []float32) {
	sgemmKernelThen(lowKernel(v), tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, bias, then, sums)
}

// packedFor is the kernel p was packed for.
func (p *panels) packedFor() *kernel { return p.kern }

// rowsLayout is how kern reads A (m, k) converted row by row (see
// ConvertedA): the words between rows, the words of all its row panels,
// and the K steps of a word; ok is false for a kernel that does not read
// A so.
func rowsLayout(kern *kernel, m, k int) (stride, words, align int, ok bool) {
	if kern == nil || kern.packARows == nil {
		return 0, 0, 0, false
	}
	stride, words = kern.rowsWords(m, k)
	return stride, words, kern.kw, true
}

// zeroRowsPadding zeroes what kern reads of A (m, k) converted into dst
// (rows stride words apart) that no conversion writes.
func zeroRowsPadding(kern *kernel, dst []float32, stride, m, k int) {
	kern.zeroPastK(dst, stride, m, k)
}

// convertBlock converts rows rows of steps K steps of a (row stride lda)
// into dst, rows stride words apart, as kern reads them; with stream,
// with streaming stores where kern has them, fenced before it returns.
func convertBlock(kern *kernel, dst []float32, stride int, a []float32, lda, rows, steps int, stream bool) {
	if !stream || kern.streamARows == nil {
		kern.packARows(dst, stride, a, lda, rows, steps)
		return
	}
	kern.streamARows(dst, stride, a, lda, rows, steps)
	vec.StoreFence()
}
