// Package blas is the single entry point for the dense matrix products used by
// vit-train's fused ops.
//
// The default build runs float32 products on the package's own SGEMM: op(A)
// and op(B) are cut into K blocks and packed (or, where that pays, read in
// place) into panels that an assembly micro-kernel multiplies in registers,
// 12×32 tiles with AVX-512 or 6×16 with AVX2+FMA, chosen at run time from the
// CPU's features; large products are spread over the workers of
// nn/parallel. A B operand that many products share, such as frozen
// weights, can be packed once with PackB and multiplied by with
// GemmPacked. Other CPUs and architectures, and float64 products, use
// gonum's pure-Go kernels. Gorgonia's and tensor's float32 GEMM is routed
// through the same kernel. The build tag `openblas` routes all of it through
// OpenBLAS (Debian's libopenblas-dev) via cgo instead.
//
// In the default build the environment variable VIT_TRAIN_GEMM, read once at
// start-up, forces the float32 kernel: "avx512", "avx2" or "gonum". Any other
// value, or a kernel the CPU cannot run, makes the program panic during
// initialisation. Backend reports the kernel in use.
//
// GemmAs and PackBAs run float32 products in a low-precision Variant
// instead: bfloat16 operands with float32 sums on the vector unit
// (VDPBF16PS) or on AMX's tiles (TDPBF16PS), or float16 operands and
// short float16 sums (VFMADD231PH), each matching a pure-Go emulation of
// its rounding bit for bit (see the tests). Mixed picks the fastest one
// the CPU has, measured at first use, or FP32;
// VIT_TRAIN_LOWP=bf16|fp16|amx|none forces its choice.
//
// All matrices are row-major. A transposed operand is read as its transpose
// without being copied, exactly as in CBLAS. A and B may share memory; C
// must not overlap either: the workers write C while others still read
// (and pack) A and B.
package blas

import (
	"runtime"

	"github.com/vit-train/vit-train/nn/parallel"
)

// Backend names the float32 matrix product in use: "go-avx512" or
// "go-avx2" for this package's own kernels (the default build on CPUs
// with AVX-512 or AVX2+FMA), "gonum" for gonum's pure-Go kernels, or
// "openblas" in a build with the tag openblas.
func Backend() string { return backend() }

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
		// Split the rows of C (and of op(A)) into one part per core, each a
		// single-threaded product. The parts are fixed by m and the core
		// count, whoever runs them, so the result does not depend on which
		// workers were free (a product's rounding depends on its size).
		chunk := (m + workers - 1) / workers
		parallel.Loop((m+chunk-1)/chunk, 1, rowParts[T]{transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, chunk})
		return
	}
	gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// GemmBias computes C = alpha·op(A)·op(B) + beta·C + 1·biasᵀ: Gemm with
// bias (n) added to every row of C, as a linear layer's y = x·Wᵀ + b is.
// The default build's float32 kernels add the bias as they store each tile
// of C; otherwise C is first set to beta·C + bias, then the product added.
func GemmBias[T float32 | float64](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, bias []T) {
	if m == 0 || n == 0 {
		return
	}
	if len(bias) < n {
		panic("blas: insufficient length of bias")
	}
	if a32, ok := any(a).([]float32); ok && sgemmBias(transA, transB, m, n, k, float32(alpha), a32, lda,
		any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc, any(bias).([]float32)) {
		return
	}
	if (m-1)*ldc+n > len(c) {
		panic("blas: insufficient length of c")
	}
	parallel.Loop(m, 256, biasRows[T]{c, ldc, n, beta, bias})
	Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, 1, c, ldc)
}

// biasRows sets rows of C to beta·C + bias.
type biasRows[T float32 | float64] struct {
	c      []T
	ldc, n int
	beta   T
	bias   []T
}

func (r *biasRows[T]) Range(lo, hi int) {
	for i := lo; i < hi; i++ {
		scaleAddRow(r.c[i*r.ldc:i*r.ldc+r.n], r.beta, r.bias)
	}
}

// scaleAddRow sets row = beta·row + bias (bias nil: beta·row); beta = 0
// overwrites row, NaNs included.
func scaleAddRow[T float32 | float64](row []T, beta T, bias []T) {
	switch beta {
	case 0:
		clear(row)
	case 1:
	default:
		for j := range row {
			row[j] *= beta
		}
	}
	if bias != nil {
		for j := range row {
			row[j] += bias[j]
		}
	}
}

// rowParts is Gemm over a range of its chunk-row parts.
type rowParts[T float32 | float64] struct {
	transA, transB bool
	m, n, k        int
	alpha          T
	a              []T
	lda            int
	b              []T
	ldb            int
	beta           T
	c              []T
	ldc, chunk     int
}

func (p *rowParts[T]) Range(lo, hi int) {
	for part := lo; part < hi; part++ {
		r0, r1 := part*p.chunk, min((part+1)*p.chunk, p.m)
		aOff := r0 * p.lda
		if p.transA {
			aOff = r0
		}
		gemm(p.transA, p.transB, r1-r0, p.n, p.k, p.alpha, p.a[aOff:], p.lda, p.b, p.ldb, p.beta, p.c[r0*p.ldc:], p.ldc)
	}
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

// checkGemm panics, as gonum does, on strides or slices too short for
// the matrices they hold: the kernels read and write memory directly.
func checkGemm(tA, tB bool, m, n, k, la, lda, lb, ldb, lc, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic("blas: negative matrix dimension")
	}
	ra, ca := storedShape(tA, m, k)
	rb, cb := storedShape(tB, k, n)
	switch {
	case lda < max(1, ca):
		panic("blas: bad lda")
	case ldb < max(1, cb):
		panic("blas: bad ldb")
	case ldc < max(1, n):
		panic("blas: bad ldc")
	case ra > 0 && ca > 0 && la < (ra-1)*lda+ca:
		panic("blas: insufficient length of a")
	case rb > 0 && cb > 0 && lb < (rb-1)*ldb+cb:
		panic("blas: insufficient length of b")
	case m > 0 && n > 0 && lc < (m-1)*ldc+n:
		panic("blas: insufficient length of c")
	}
}

// storedShape is the shape of the matrix that holds op(X), (rows, cols):
// the same, or transposed when trans.
func storedShape(trans bool, rows, cols int) (int, int) {
	if trans {
		return cols, rows
	}
	return rows, cols
}
