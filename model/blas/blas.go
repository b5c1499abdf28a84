// Package blas is the single entry point for the dense matrix products used by
// vit-train's fused ops. The default build uses gonum's pure-Go kernels; the
// build tag `openblas` routes the same calls, and Gorgonia's and tensor's BLAS,
// through OpenBLAS (Debian's libopenblas-dev) via cgo.
//
// All matrices are row-major. A transposed operand is read as its transpose
// without being copied, exactly as in CBLAS.
package blas

import (
	"runtime"
	"sync"
)

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
	workers := runtime.GOMAXPROCS(0)
	if splitRows && workers > 1 && m >= 2*workers && m*n*k >= parallelWork {
		// Split the rows of C (and of op(A)) over the cores; each part is a
		// single-threaded product in its own goroutine.
		var wg sync.WaitGroup
		chunk := (m + workers - 1) / workers
		for r0 := 0; r0 < m; r0 += chunk {
			r1 := min(r0+chunk, m)
			aOff := r0 * lda
			if transA {
				aOff = r0
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				gemm(transA, transB, r1-r0, n, k, alpha, a[aOff:], lda, b, ldb, beta, c[r0*ldc:], ldc)
			}()
		}
		wg.Wait()
		return
	}
	gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// parallelWork is the product size m·n·k from which Gemm splits its rows
// over the cores, for backends that are single-threaded.
const parallelWork = 1 << 20

func gemm[T float32 | float64](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	switch av := any(a).(type) {
	case []float32:
		sgemm(transA, transB, m, n, k, float32(alpha), av, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		dgemm(transA, transB, m, n, k, float64(alpha), av, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}
