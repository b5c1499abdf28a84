package blas

import "fmt"

// PackedB is the B operand of products that reuse one op(B) over many A,
// such as a frozen layer's weights: copied once into the layout the
// float32 kernels read, so that GemmPacked skips packing it on every
// product. It is a snapshot: later changes to the matrix it was packed
// from do not reach it. It costs as much memory as op(B) itself.
type PackedB[T float32 | float64] struct {
	k, n int
	// panels is op(B) packed for this package's float32 kernel.
	panels *panels
	// plain is B as it was stored, (k, n) or (n, k) when transB, without
	// its row padding, where there is no such kernel (float64, gonum's or
	// OpenBLAS's products).
	plain  []T
	transB bool
}

// PackB copies op(B), (k, n), for GemmPacked: B is (k, n) with row stride
// ldb, or (n, k) when transB.
func PackB[T float32 | float64](transB bool, k, n int, b []T, ldb int) *PackedB[T] {
	return packB(activePanels(), transB, k, n, b, ldb)
}

// packB is PackB for the kernel kern (nil: keep B plain).
func packB[T float32 | float64](kern *panelKernel, transB bool, k, n int, b []T, ldb int) *PackedB[T] {
	checkGemm(false, transB, 0, n, k, 0, max(1, k), len(b), ldb, 0, max(1, n))
	// With k = 0 op(B) is empty as either shape; (0, n) needs no storage.
	p := &PackedB[T]{k: k, n: n, transB: transB && k > 0}
	if b32, ok := any(b).([]float32); ok && k > 0 && n > 0 {
		if p.panels = packPanels(kern, transB, k, n, b32, ldb); p.panels != nil {
			return p
		}
	}
	rows, cols := storedShape(p.transB, k, n)
	p.plain = make([]T, rows*cols)
	for i := range rows {
		copy(p.plain[i*cols:(i+1)*cols], b[i*ldb:i*ldb+cols])
	}
	return p
}

// RowAlign is the number of rows of the matrix p was packed from that
// RepackRows takes at a time: a panel's columns of op(B) where p holds
// Bᵀ's rows as columns, the K steps of one packed row otherwise.
func (p *PackedB[T]) RowAlign() int {
	if p.panels == nil {
		return 1
	}
	return p.panels.rowAlign(p.transB)
}

// RepackRows copies rows [r0, r1) of b, the matrix p was packed from (B,
// or Bᵀ when transB, with row stride ldb as PackB took it), into p again
// after their values changed, leaving the rest of p as it is: afterwards
// p is what PackB would make of b where the rest of b has not changed
// since p was packed. r0 and r1 are multiples of RowAlign, or r1 is b's
// last row. Calls for disjoint rows may run at once.
func (p *PackedB[T]) RepackRows(b []T, ldb, r0, r1 int) {
	rows, cols := storedShape(p.transB, p.k, p.n)
	if a := p.RowAlign(); r0 < 0 || r0 > r1 || r1 > rows || r0%a != 0 || (r1%a != 0 && r1 != rows) {
		panic(fmt.Sprintf("blas: RepackRows of rows [%d, %d) of %d in steps of %d", r0, r1, rows, a))
	}
	if r0 == r1 {
		return
	}
	if p.panels != nil {
		p.panels.repackRows(any(b).([]float32), ldb, p.transB, r0, r1)
		return
	}
	for i := r0; i < r1; i++ {
		copy(p.plain[i*cols:(i+1)*cols], b[i*ldb:i*ldb+cols])
	}
}

// GemmPacked computes C = alpha·op(A)·B + beta·C + 1·biasᵀ for B packed
// by PackB: op(A) is (m, k), C is (m, n) and bias is (n), or nil for
// none. The result is bit for bit GemmBias's (Gemm's without a bias) on
// the matrix B was packed from, except with gonum's float32 product (no
// assembly kernel for the CPU), whose rounding depends on where its
// operands lie in memory: there it may differ in the last bit.
func GemmPacked[T float32 | float64](transA bool, m int, alpha T, a []T, lda int, b *PackedB[T], beta T, c []T, ldc int, bias []T) {
	GemmPackedThen(transA, m, alpha, a, lda, b, beta, c, ldc, bias, nil)
}

// GemmPackedThen is GemmPacked followed by then (nil: none) on blocks of
// C that tile it, each once, as GemmAsThen calls it: on each row strip as
// the kernel stores it where B is packed in panels, else on rows of C
// after the product.
func GemmPackedThen[T float32 | float64](transA bool, m int, alpha T, a []T, lda int, b *PackedB[T], beta T, c []T, ldc int, bias []T, then Then) {
	gemmPackedThen(transA, m, alpha, a, lda, nil, b, beta, c, ldc, bias, then)
}

// gemmPackedThen is GemmPackedThen reading op(A) = A from convA where it
// is not nil, converted for b's panels.
func gemmPackedThen[T float32 | float64](transA bool, m int, alpha T, a []T, lda int, convA *ConvertedA, b *PackedB[T], beta T, c []T, ldc int, bias []T, then Then) {
	if m == 0 || b.n == 0 {
		return
	}
	if bias != nil && len(bias) < b.n {
		panic("blas: insufficient length of bias")
	}
	if b.panels != nil {
		gemmPanels(b.panels, transA, m, float32(alpha), any(a).([]float32), lda, convA, float32(beta), any(c).([]float32), ldc, any(bias).([]float32), then)
		return
	}
	_, ldb := storedShape(b.transB, b.k, b.n)
	if bias == nil {
		Gemm(transA, b.transB, m, b.n, b.k, alpha, a, lda, b.plain, max(1, ldb), beta, c, ldc)
	} else {
		GemmBias(transA, b.transB, m, b.n, b.k, alpha, a, lda, b.plain, max(1, ldb), beta, c, ldc, bias)
	}
	if then != nil {
		ThenRows(m, b.n, then)
	}
}
