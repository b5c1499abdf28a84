//go:build !openblas

package blas

import "github.com/vit-train/vit-train/nn/parallel"

// panels is op(B), (k, n), packed in advance for one kernel: for each K
// block of kc steps (the last may be shorter), the panels of nr columns
// of all n columns in turn, each kc rows of nr floats, zero past column
// n. A product's K blocks are those blockSizes gives for any number of
// rows, so every product reads the panels as it would have packed them.
type panels struct {
	kern     *kernel
	k, n, kc int
	data     []float32
}

// roundCols rounds n columns up to whole panels.
func (k *kernel) roundCols(n int) int { return ceilDiv(n, k.nr) * k.nr }

// rowWords is how many words one packed row of all n columns takes, in
// whole panels.
func (k *kernel) rowWords(n int) int { return k.roundCols(n) / k.nr * k.bRow }

// offset is where the panel of columns [j, j+nr) of the K block that
// starts at step pc, kc steps long, begins in data.
func (p *panels) offset(pc, kc, j int) int {
	kern := p.kern
	return pc/kern.kw*kern.rowWords(p.n) + j/kern.nr*kern.rows(kc)*kern.bRow
}

// packPanels packs op(B) for kern, or returns nil where kern is nil
// (gonum's products). b has been checked to hold op(B).
func packPanels(kern *kernel, tB bool, k, n int, b []float32, ldb int) *panels {
	if kern == nil {
		return nil
	}
	kc, _ := kern.blockSizes(n, k)
	p := &panels{kern: kern, k: k, n: n, kc: kc}
	p.data = hugeFloats(p, kern.rows(k)*kern.rowWords(n))
	parallel.For(p.pieces(), 16, func(lo, hi int) { p.pack(b, ldb, tB, 0, lo, hi) })
	return p
}

// pieces is how many panels p holds: one per K block and nr columns.
func (p *panels) pieces() int { return ceilDiv(p.k, p.kc) * ceilDiv(p.n, p.kern.nr) }

// pack packs pieces [lo, hi) of p (piece t is panel t % columns of K
// block t / columns) from op(B)'s columns j0 on.
func (p *panels) pack(b []float32, ldb int, tB bool, j0, lo, hi int) {
	kern := p.kern
	cols := ceilDiv(p.n, kern.nr)
	for t := lo; t < hi; t++ {
		pc, j := t/cols*p.kc, t%cols*kern.nr
		kcb := min(p.kc, p.k-pc)
		off := p.offset(pc, kcb, j)
		kern.packB(p.data[off:off+kern.rows(kcb)*kern.bRow], kern.nr, b, ldb, tB, j0+j, min(kern.nr, p.n-j), pc, kcb)
	}
}

// rowAlign is how many rows of the matrix p was packed from repackRows
// takes at a time (panelRowAlign).
func (p *panels) rowAlign(tB bool) int { return panelRowAlign(p.kern, tB) }

// panelRowAlign is how many rows of a matrix packed for kern (nil: kept
// plain) are repacked at a time: nr where they are op(B)'s columns (tB),
// the K steps of one packed row (kw) where they are its K steps.
func panelRowAlign(kern *kernel, tB bool) int {
	switch {
	case kern == nil:
		return 1
	case tB:
		return kern.nr
	}
	return kern.kw
}

// repackRows packs rows [r0, r1) of b (the rows of B, or of Bᵀ when tB)
// into p again: the nr-column panels [r0, r1) covers in every K block
// when they are op(B)'s columns, else those K steps' packed rows in every
// panel. r0 and r1 are multiples of rowAlign(tB), or r1 is the last row.
func (p *panels) repackRows(b []float32, ldb int, tB bool, r0, r1 int) {
	kern := p.kern
	cols := ceilDiv(p.n, kern.nr)
	if tB {
		for pc := 0; pc < p.k; pc += p.kc {
			t := pc / p.kc * cols
			p.pack(b, ldb, true, 0, t+r0/kern.nr, t+ceilDiv(r1, kern.nr))
		}
		return
	}
	for pc := r0 / p.kc * p.kc; pc < r1; pc += p.kc {
		kcb := min(p.kc, p.k-pc)
		s0, s1 := max(r0, pc), min(r1, pc+kcb)
		words := ceilDiv(s1-s0, kern.kw) * kern.bRow
		for j := 0; j < p.n; j += kern.nr {
			off := p.offset(pc, kcb, j) + (s0-pc)/kern.kw*kern.bRow
			kern.packB(p.data[off:off+words], kern.nr, b, ldb, false, j, min(kern.nr, p.n-j), s0, s1-s0)
		}
	}
}

// gemmPanels computes C = alpha·op(A)·B + beta·C + 1·biasᵀ (bias nil for
// none) with B packed in p; m, n > 0. convA, if not nil, is op(A) = A
// converted for p's kernel, read in place of converting a.
// then, if not nil, runs on each row strip of C as the kernel finishes it.
func gemmPanels(p *panels, tA bool, m int, alpha float32, a []float32, lda int, convA *ConvertedA, beta float32, c []float32, ldc int, bias []float32, then Then) {
	checkGemm(tA, false, m, p.n, p.k, len(a), lda, p.k*p.n, max(1, p.n), len(c), ldc)
	g := getCall()
	g.kern, g.panels, g.then, g.given = p.kern, p, then, convA
	g.tA, g.m, g.n, g.k = tA, m, p.n, p.k
	g.alpha, g.beta = alpha, beta
	g.a, g.c, g.lda, g.ldc, g.bias = a, c, lda, ldc, bias
	g.run()
}
