//go:build openblas

package blas

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import (
	"unsafe"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func backend() string { return "openblas" }

// OpenBLAS runs single-threaded (see init): Gemm spreads large products over
// goroutines itself, and the many small per-head products of attention,
// issued from several goroutines at once, never contend for OpenBLAS's
// thread pool.
const splitRows = true

func ctrans(t bool) C.enum_CBLAS_TRANSPOSE {
	if t {
		return C.CblasTrans
	}
	return C.CblasNoTrans
}

func sgemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	C.cblas_sgemm(C.CblasRowMajor, ctrans(tA), ctrans(tB), C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), (*C.float)(unsafe.Pointer(unsafe.SliceData(a))), C.blasint(lda),
		(*C.float)(unsafe.Pointer(unsafe.SliceData(b))), C.blasint(ldb), C.float(beta),
		(*C.float)(unsafe.Pointer(unsafe.SliceData(c))), C.blasint(ldc))
}

// sgemmBias reports false: OpenBLAS has no product with a bias row, so
// GemmBias adds it before the product.
func sgemmBias(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32) bool {
	return false
}

func dgemm(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	C.cblas_dgemm(C.CblasRowMajor, ctrans(tA), ctrans(tB), C.blasint(m), C.blasint(n), C.blasint(k),
		C.double(alpha), (*C.double)(unsafe.Pointer(unsafe.SliceData(a))), C.blasint(lda),
		(*C.double)(unsafe.Pointer(unsafe.SliceData(b))), C.blasint(ldb), C.double(beta),
		(*C.double)(unsafe.Pointer(unsafe.SliceData(c))), C.blasint(ldc))
}

// openBLAS satisfies tensor.BLAS: gonum's kernels for everything, with the
// matrix-matrix and matrix-vector products that dominate Gorgonia's own
// MatMul/MatVecMul replaced by OpenBLAS.
type openBLAS struct{ gonum.Implementation }

func cblasTrans(t gblas.Transpose) bool { return t == gblas.Trans || t == gblas.ConjTrans }

func (openBLAS) Sgemm(tA, tB gblas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	sgemm(cblasTrans(tA), cblasTrans(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (openBLAS) Dgemm(tA, tB gblas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	dgemm(cblasTrans(tA), cblasTrans(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func init() {
	C.openblas_set_num_threads(1)
	var b openBLAS
	tensor.Use(b)
	gorgonia.Use(b)
}

// panels is op(B) packed for an assembly kernel, which this build lacks.
type panels struct{}

func (*panels) rowAlign(bool) int { return 1 }

func panelRowAlign(*panelKernel, bool) int { return 1 }

func (*panels) repackRows([]float32, int, bool, int, int) {}

// panelKernel is an assembly kernel, which this build lacks.
type panelKernel struct{}

func activePanels() *panelKernel { return nil }

// No low-precision variant runs on this build.
func variantRuns(Variant) bool { return false }

func variantPanels(Variant) *panelKernel { return nil }

func (*panels) packedFor() *panelKernel { return nil }

// rowsLayout reports false: no kernel here reads converted rows.
func rowsLayout(*panelKernel, int, int) (stride, words, align int, ok bool) { return 0, 0, 0, false }

// zeroRowsPadding and convertBlock are never reached, rowsLayout refusing
// every kernel.
func zeroRowsPadding(*panelKernel, []float32, int, int, int) {}

func convertBlock(*panelKernel, []float32, int, []float32, int, int, int, bool) {
	panic("blas: no converted rows in this build")
}

func variantGemmThen(v Variant, tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32, then Then, sums []float32) {
	panic("blas: no low-precision products in this build")
}

// inStrips reports false: this build has no strip kernel.
func (*chain) inStrips(Variant, ChainRows[float32]) bool { return false }

// chainGradInStrips reports false: this build has no strip kernel.
func chainGradInStrips(Variant, *ChainGrad[float32], ChainRowsGrad[float32]) bool { return false }

// packPanels returns nil: PackB keeps op(B) as a plain matrix.
func packPanels(kern *panelKernel, tB bool, k, n int, b []float32, ldb int) *panels { return nil }

// gemmPanels is never reached, packPanels making no panels.
func gemmPanels(p *panels, tA bool, m int, alpha float32, a []float32, lda int, convA *ConvertedA, beta float32, c []float32, ldc int, bias []float32, then Then) {
	panic("blas: no packed panels in this build")
}
