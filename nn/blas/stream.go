//go:build !openblas

package blas

// streamBBytes is the least size of op(B) packed (all of K, 32-bit words)
// of a product that streamsB takes.
const streamBBytes = 2 << 20

// streamsB says whether g's tasks split only its columns, so that each
// task packs each K block of its columns of op(B) once, as its strips
// reach it, and they read it from L2 (blockStrips). A weight gradient
// dYᵀ·X whose layer's output is narrower than its input, such as an MLP's
// second layer, is one: its X, long in K (the batch's tokens), would
// otherwise be packed over all of K before the kernel runs, go to memory
// packed and come back, and be read again by each task of a column's
// rows. It takes a strip kernel, op(B) not packed in advance, several K
// blocks, op(B) packed too large for the caches, fewer rows than columns,
// and rows few enough that a column block of at least 4 panels carries
// their sums within stripSumsBytes (one chunk of rows).
func (g *gemmCall) streamsB() bool {
	kern := g.kern
	return kern.strip != nil && g.panels == nil && g.kc < g.k && g.m < g.n &&
		4*kern.rows(g.k)*kern.rowWords(g.n) >= streamBBytes &&
		g.m <= stripSumsBytes/(4*4*kern.nr)
}

// streamColTasks is how many column blocks a product streamsB takes is
// cut into: at least target where it has as many panels, and blocks
// narrow enough that their sums over all m rows fit stripSumsBytes.
func (g *gemmCall) streamColTasks(colPanels, target int) int {
	kern := g.kern
	widest := stripSumsBytes / (4 * ceilDiv(g.m, kern.mr) * kern.mr) / kern.nr
	return min(colPanels, max(target, ceilDiv(colPanels, widest)))
}
