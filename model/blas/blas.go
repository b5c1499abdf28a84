// Package blas is the single entry point for the dense matrix products used by
// vit-train's fused ops. The default build uses gonum's pure-Go kernels; the
// build tag `openblas` routes the same calls, and Gorgonia's and tensor's BLAS,
// through OpenBLAS (Debian's libopenblas-dev) via cgo.
//
// All matrices are row-major. A transposed operand is read as its transpose
// without being copied, exactly as in CBLAS.
package blas

// Backend names the implementation compiled into this binary: "gonum" or "openblas".
func Backend() string { return backend }

// Gemm computes C = alpha·op(A)·op(B) + beta·C for row-major float32 or
// float64 matrices, where op(X) is X or Xᵀ according to transA/transB,
// op(A) is (m, k), op(B) is (k, n) and C is (m, n). lda, ldb and ldc are the
// row strides of the stored matrices.
func Gemm[T float32 | float64](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	switch av := any(a).(type) {
	case []float32:
		sgemm(transA, transB, m, n, k, float32(alpha), av, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		dgemm(transA, transB, m, n, k, float64(alpha), av, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}
