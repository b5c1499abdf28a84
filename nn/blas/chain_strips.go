//go:build !openblas

package blas

// inStrips computes ch strip by strip on v's kernel, if that kernel
// computes strips, and reports whether it did. Both B operands are packed
// first, whole; then for each strip of mr rows, A's rows are converted,
// the strip of S computed into a buffer of mr rows, made into P by
// rowsFn while it is in L1, P's rows converted and the strip of C
// computed. Each output is one chain of the kernel's instructions over
// all of its K, as blockStrips makes it over K blocks, so the values are
// GemmAs's.
func (ch *chain) inStrips(v Variant, rowsFn ChainRows[float32]) bool {
	kern := lowKernel(v)
	if kern == nil || kern.strip == nil || kern.packARows == nil {
		return false
	}
	mr := kern.mr
	rows1, rows2 := kern.rows(ch.k), kern.rows(ch.n) // packed rows of each product's K
	stride1, stride2 := kern.rowStride(ch.k), kern.rowStride(ch.n)
	bWords, dWords := rows1*kern.rowWords(ch.n), rows2*kern.rowWords(ch.e)
	buf := chainPool.get(bWords + dWords + mr*(stride1+stride2+ch.lds))
	defer chainPool.put(buf)
	rest := *buf
	take := func(n int) []float32 { t := rest[:n]; rest = rest[n:]; return t }
	bp, dp, a1, a2, s := take(bWords), take(dWords), take(mr*stride1), take(mr*stride2), take(mr*ch.lds)
	packWhole(kern, bp, ch.b, ch.ldb, true, ch.k, ch.n)
	packWhole(kern, dp, ch.d, ch.ldd, false, ch.n, ch.e)
	for i := 0; i < ch.m; i += mr {
		rows := min(mr, ch.m-i)
		convertRows(kern, a1, stride1, ch.a[i*ch.lda:], ch.lda, rows, ch.k)
		stripProduct(kern, rows1, a1, stride1, bp, ch.n, s, ch.lds, ch.alpha, rows)
		p, ldp := rowsFn(i, i+rows, s)
		convertRows(kern, a2, stride2, p, ldp, rows, ch.n)
		stripProduct(kern, rows2, a2, stride2, dp, ch.e, ch.c[i*ch.ldc:], ch.ldc, 1, rows)
	}
	return true
}

// chainPool holds the chains' buffers: both B operands packed and a
// strip of each A and of S. A pool of their own keeps them from taking,
// and growing, the products' buffers of other sizes.
var chainPool bufPool

// packWhole packs op(X), (k, n), into dst as one K block of kern's
// panels: X is (k, n) with row stride ldx, or (n, k) when tX.
func packWhole(kern *kernel, dst, x []float32, ldx int, tX bool, k, n int) {
	p := panels{kern: kern, k: k, n: n, kc: k, data: dst}
	p.pack(x, ldx, tX, 0, 0, p.pieces())
}

// convertRows converts rows rows of k steps of a row-major x (row stride
// ldx) to kern's words in dst, stride words apart, zero past K and in the
// rows past rows, up to mr.
func convertRows(kern *kernel, dst []float32, stride int, x []float32, ldx, rows, k int) {
	kern.packARows(dst, stride, x, ldx, rows, k)
	kern.zeroPastK(dst, stride, rows, k)
}

// stripProduct sets the first rows rows of c (row stride ldc), n columns,
// to alpha·a·b for one strip of A converted by convertRows (stride
// words a row) and op(B) packed by packWhole over kRows packed rows.
func stripProduct(kern *kernel, kRows int, a []float32, stride int, b []float32, n int, c []float32, ldc int, alpha float32, rows int) {
	panels := ceilDiv(n, kern.nr)
	mask := colMask(n - (panels-1)*kern.nr)
	kern.strip(kRows, &a[0], stride, &b[0], kern.bRow, kRows*kern.bRow, panels, &c[0], ldc, alpha, 0, rows, mask, nil, nil, 0, 1)
}

// chainGradInStrips computes g strip by strip on v's kernel, if that
// kernel computes strips, and reports whether it did. The four B
// operands are packed first, whole (Dᵀ, B, dC and A); then for each
// strip of mr rows of dC, its rows are converted, the strip of dP
// computed into DS, made into dS by grad while it is in L1, converted,
// and the strip of DA computed; then for each strip of mr columns of P
// and of dS, converted as rows of Pᵀ and dSᵀ, the strips of DD and DB.
// Each output is one chain of the kernel's instructions over all of its
// K, as blockStrips makes it, so the values are GemmAs's.
func chainGradInStrips(v Variant, g *ChainGrad[float32], grad ChainRowsGrad[float32]) bool {
	kern := lowKernel(v)
	if kern == nil || kern.strip == nil || kern.packARows == nil || kern.packATRows == nil {
		return false
	}
	mr := kern.mr
	rowsE, rowsN, rowsM := kern.rows(g.E), kern.rows(g.N), kern.rows(g.M)
	strideE, strideN, strideM := kern.rowStride(g.E), kern.rowStride(g.N), kern.rowStride(g.M)
	dWords, bWords := rowsE*kern.rowWords(g.N), rowsN*kern.rowWords(g.K)
	dcWords, aWords := rowsM*kern.rowWords(g.E), rowsM*kern.rowWords(g.K)
	buf := chainPool.get(dWords + bWords + dcWords + aWords + mr*(strideE+strideN+strideM))
	defer chainPool.put(buf)
	rest := *buf
	take := func(n int) []float32 { t := rest[:n]; rest = rest[n:]; return t }
	dp, bp, dcp, ap := take(dWords), take(bWords), take(dcWords), take(aWords)
	stripE, stripN, stripM := take(mr*strideE), take(mr*strideN), take(mr*strideM)
	packWhole(kern, dp, g.D, g.LDD, true, g.E, g.N)
	packWhole(kern, bp, g.B, g.LDB, false, g.N, g.K)
	packWhole(kern, dcp, g.DC, g.LDDC, false, g.M, g.E)
	packWhole(kern, ap, g.A, g.LDA, false, g.M, g.K)
	for i := 0; i < g.M; i += mr {
		rows := min(mr, g.M-i)
		ds := g.DS[i*g.LDS:]
		convertRows(kern, stripE, strideE, g.DC[i*g.LDDC:], g.LDDC, rows, g.E)
		stripProduct(kern, rowsE, stripE, strideE, dp, g.N, ds, g.LDS, 1, rows)
		grad(i, i+rows, ds)
		convertRows(kern, stripN, strideN, ds, g.LDS, rows, g.N)
		stripProduct(kern, rowsN, stripN, strideN, bp, g.K, g.DA[i*g.LDDA:], g.LDDA, g.Alpha, rows)
	}
	for j := 0; j < g.N; j += mr {
		cols := min(mr, g.N-j)
		convertColumns(kern, stripM, strideM, g.P[j:], g.LDP, cols, g.M)
		stripProduct(kern, rowsM, stripM, strideM, dcp, g.E, g.DD[j*g.LDDD:], g.LDDD, 1, cols)
		convertColumns(kern, stripM, strideM, g.DS[j:], g.LDS, cols, g.M)
		stripProduct(kern, rowsM, stripM, strideM, ap, g.K, g.DB[j*g.LDDB:], g.LDDB, g.Alpha, cols)
	}
	return true
}

// convertColumns is convertRows for the rows of op(X) = Xᵀ: cols columns
// of a row-major x (row stride ldx), k rows of it.
func convertColumns(kern *kernel, dst []float32, stride int, x []float32, ldx, cols, k int) {
	kern.packATRows(dst, stride, x, ldx, cols, k, nil)
	kern.zeroPastK(dst, stride, cols, k)
}
