package blas

// GemmChainAs computes two products chained through a function of rows,
// as attention's scores q·kᵀ, their softmax and its product with v:
//
//	S = alpha·A·Bᵀ   A (m, k), B (n, k), S (m, n)
//	P = rows(S)      P (m, n), made rows [r0, r1) at a time
//	C = P·D          D (n, e), C (m, e)
//
// in v's arithmetic as GemmAs has it for each product. S lives in
// storage of GemmChainAs's own, its rows lds apart (lds ≥ n): rows(r0,
// r1, s) is given rows [r0, r1) of S at s (row r0 first), may overwrite
// them, and returns where it put the same rows of P: p, row r0 first,
// rows ldp apart (s itself and lds, or storage of the caller's). The
// values are GemmAs's bit for bit:
//
//	GemmAs(v, false, true, m, n, k, alpha, a, lda, b, ldb, 0, s, lds, nil)
//	p, ldp := rows(0, m, s)
//	GemmAs(v, false, false, m, e, n, 1, p, ldp, d, ldd, 0, c, ldc, nil)
//
// Where both products run on a kernel that computes strips of rows (the
// AMX kernel), they go strip by strip instead, 32 rows at a time: each
// strip of S is computed into a buffer that stays in L1, made into P
// there or wherever rows puts it, and its rows of C follow. That path
// runs on the calling goroutine; calls may run at once.
func GemmChainAs[T float32 | float64](v Variant, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, lds int, rows ChainRows[T], e int, d []T, ldd int, c []T, ldc int) {
	if m == 0 {
		return
	}
	// S is ours; P is rows's, whose length only the product reading it
	// can check.
	checkGemm(false, true, m, n, k, len(a), lda, len(b), ldb, lds*(m-1)+n, lds)
	checkGemm(false, false, m, e, n, m*n, n, len(d), ldd, len(c), ldc)
	a32, low := any(a).([]float32)
	if low && !v.arithmetic(min(k, n)).IsFP32() && v.Runs() && e > 0 {
		ch := chain{m: m, n: n, k: k, e: e, alpha: float32(alpha), a: a32, lda: lda, b: any(b).([]float32), ldb: ldb,
			lds: lds, d: any(d).([]float32), ldd: ldd, c: any(c).([]float32), ldc: ldc}
		if ch.inStrips(v, any(rows).(ChainRows[float32])) {
			return
		}
	}
	var s []T
	if low {
		buf := scratchPool.get(m * lds)
		defer scratchPool.put(buf)
		s = any((*buf)[:m*lds]).([]T)
	} else {
		s = make([]T, m*lds)
	}
	GemmAs(v, false, true, m, n, k, alpha, a, lda, b, ldb, 0, s, lds, nil)
	p, ldp := rows(0, m, s)
	GemmAs(v, false, false, m, e, n, 1, p, ldp, d, ldd, 0, c, ldc, nil)
}

// scratchPool holds S for chains computed as two products.
var scratchPool bufPool

// ChainRows is GemmChainAs's function of rows: given rows [r0, r1) of S
// at s, row r0 first, it returns where it put the same rows of P.
type ChainRows[T float32 | float64] = func(r0, r1 int, s []T) (p []T, ldp int)

// chain is GemmChainAs's operands in float32, but for its function of
// rows, which is passed on its own so that it need not escape.
type chain struct {
	m, n, k, e int
	alpha      float32
	a          []float32
	lda        int
	b          []float32
	ldb        int
	lds        int
	d          []float32
	ldd        int
	c          []float32
	ldc        int
}
