//go:build !openblas

package blas

import (
	"runtime"

	"github.com/vit-train/vit-train/nn/parallel"
	"github.com/vit-train/vit-train/nn/vec"
)

// kernel is an assembly micro-kernel computing (mr, nr) tiles of C:
//
//	C[0:rows, cols] = alpha·Ã·B̃ + beta·C[0:rows, cols] (+ bias[cols])
//
// where Ã is (mr, k) with element (i, p) at a[i·rsa + p·csa] and B̃ is
// (k, nr) with row p the nr floats at b[p·ldb]. beta = 0 writes C without
// reading it. A non-nil bias points at the tile's first column of a row
// added to every row of C. A masked kernel stores, and reads from B, C
// and the bias, only the columns whose bit is set in mask (bit j for
// column j); an unmasked one ignores mask and always reads and writes all
// nr columns.
type kernel struct {
	name   string
	mr, nr int
	masked bool
	fn     kernelFunc
	// edge, if set, holds kernels for tiles of at most mr/2 rows (first
	// index 1) or nr/2 columns (second index 1), which read the same
	// operands as fn but compute only that part: edge[0][0] is fn.
	edge [2][2]kernelFunc
	// packA and packB pack panels of op(A) and op(B) as packAGo and
	// packBGo do, or, for a kernel that converts, in its own format. A
	// kernel that converts op(A) row by row for both transposes
	// (packARows and packATRows) packs no A panels and has no packA.
	packA func(dst []float32, mr int, a []float32, lda int, tA bool, i0, rows, p0, kc int)
	packB func(dst []float32, nr int, b []float32, ldb int, tB bool, j0, cols, p0, kc int)
	// kw is how many K steps one row of a packed panel holds (1, or 2
	// for bfloat16 pairs), aCol and bRow how many 32-bit words one
	// column of a packed A panel and one row of a packed B panel take
	// (mr and nr for float32 and bfloat16 pairs). fn's k counts packed
	// rows: ⌈kc/kw⌉ for kc steps.
	kw, aCol, bRow int
	// convert says packing converts the operands to a narrower format,
	// so that neither is ever read in place.
	convert bool
	// packARows, if set, converts rows of a row-major A to kw-step words
	// in the same order, which the kernel reads with rsa = the row's
	// words and csa = 1: converting op(A) = A then needs no transposition
	// (see packAllA).
	packARows func(dst []float32, stride int, a []float32, lda, rows, k int)
	// streamARows, if set, is packARows writing with streaming
	// (non-temporal) stores, for rows converted ahead of a product that
	// comes later (ConvertedA).
	streamARows func(dst []float32, stride int, a []float32, lda, rows, k int)
	// packATRows, if set, is packARows for op(A) = Aᵀ: rows of op(A)
	// are columns of A, a[r] for row r. With both set, A is always
	// converted row by row. Where sums is not nil it also adds each
	// row's steps in order to sums[r] (see GemmAsSums).
	packATRows func(dst []float32, stride int, a []float32, lda, rows, k int, sums []float32)
	// rowAlign, if above 1, pads a K block's packed rows to a multiple
	// of it with zeros: the AMX kernel takes 16 pairs an instruction.
	rowAlign int
	// strip, if set, computes the tiles of a row of B panels in one call
	// (see stripFunc), and the product is computed by blockStrips.
	strip stripFunc
	// kcRows, if set, caps the packed rows of a K block below kcMax's:
	// short enough that a strip's A panel stays in L1.
	kcRows int
}

// stripFunc computes, for one K block of k packed rows, the tiles of C
// of strips strips of mr rows, each over a row of panels B panels (fn's
// operands, the panels panelStride words apart, mask for the last tile):
// strip s reads A from row mr·s on and writes C from row mr·s on, and
// every strip has mr rows but the last, which has rows. With flags bit 0
// the tiles' sums start from those acc holds, with bit 1 they are stored
// there, unscaled, instead of into C: acc holds mr·nr sums per panel,
// strip after strip, so that a product whose K takes several blocks sums
// each output in one unbroken chain. Without bit 1 the sums go into C as
// fn's do (alpha, beta, bias).
type stripFunc = func(k int, a *float32, rsa int, b *float32, ldb, panelStride, panels int, c *float32, ldc int, alpha, beta float32, rows int, mask uint64, bias *float32, acc *float32, flags, strips int)

// The flags of stripFunc.
const (
	stripCarriedIn  = 1 // start from the sums in acc
	stripCarriedOut = 2 // store the sums in acc, not C
)

// rows is how many packed rows kc K steps take.
func (k *kernel) rows(kc int) int {
	r := ceilDiv(kc, k.kw)
	if k.rowAlign > 1 {
		r = ceilDiv(r, k.rowAlign) * k.rowAlign
	}
	return r
}

// convertsRows says whether kern converts op(A) row by row rather than
// packing it in panels.
func (k *kernel) convertsRows(tA bool) bool {
	if tA {
		return k.packATRows != nil
	}
	return k.packARows != nil
}

type kernelFunc = func(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint64, bias *float32)

// Blocking. A task computes a (rowBlock, colBlock) block of C: for each
// K block of kc steps, for each mr-row panel of A (in L1), for each
// nr-column panel of B in the block (the whole (kc, colBlock) B block
// stays in L2), one kernel call. K blocks are as long as kcMax allows,
// which spreads each call's fixed cost (arguments, clearing and storing
// the tile) over more steps and reads and writes C fewer times; the
// column block is then as wide as bBlockBytes allows. The sizes were
// chosen by measurement on Zen 5 (48 KiB L1D, 1 MiB L2 per core).
const (
	kcMax       = 768       // steps of one K block
	ncMax       = 384       // columns of one task's B block, at most
	bBlockBytes = 384 << 10 // the packed B block of a task, at most
	// op(B), when not transposed, is read in place rather than packed for
	// C of at most directBMaxM rows or B of at most directBMaxElems.
	directBMaxM     = 48
	directBMaxElems = 1 << 16

	// splitWork is the least m·n·k split over the workers (some 40µs of
	// work on one core), and taskWork the least given to one task.
	splitWork = 1 << 22
	taskWork  = 1 << 20
	// tasksPerProc is how many tasks a product is cut into per worker, so
	// that a core slowed by other work holds up only its last task.
	tasksPerProc = 3
)

// gemmCall is one SGEMM: its operands and its plan. The task function is a
// method value bound once, so that handing it to parallel.For allocates
// nothing; calls are recycled through calls.
type gemmCall struct {
	kern          *kernel
	tA, tB        bool
	m, n, k       int
	alpha, beta   float32
	a, b, c, bias []float32
	lda, ldb, ldc int

	// panels, if set, is op(B) packed in advance (see packPanels): b is
	// then unused and nothing is packed per task.
	panels *panels
	// convA, for a kernel that converts, is all of op(A) packed before
	// the tasks run (see packAllA), so that each element is converted
	// once rather than once per column block.
	convA *[]float32
	// given, if set, is op(A) = A converted by the caller (see
	// ConvertedA): convA is then its storage, not the pool's.
	given *ConvertedA
	// aRowWords, when convA holds op(A) = A row by row (packARows), is
	// the words of one of its rows; 0 when it holds panels.
	aRowWords int
	// rowSums, if set, receives the sums of op(A)'s rows (GemmAsSums),
	// and runSums holds each K chunk's sums of them where the conversion
	// takes them (see sumsInConversion).
	rowSums []float32
	runSums *[]float32

	kc                 int
	rowBlock, colBlock int
	rowTasks, colTasks int
	directB            bool
	// then, if set, is called on each row strip of C once its values are
	// final (see GemmAsThen).
	then Then

	// sharedB, for a strip kernel whose row tasks share column blocks,
	// holds all of op(B) packed once before the tasks run (see
	// packAllB); panels then points at shared.
	sharedB *[]float32
	shared  panels

	taskFn, packFn, packBFn func(lo, hi int)
}

var calls freeList[gemmCall]

var (
	packPool bufPool // per-task B blocks, and the sums blockStrips carries
	tilePool bufPool // per-task A panels and edge tiles, all of one size
	convPool bufPool // converted A operands
)

func getCall() *gemmCall {
	g := calls.take()
	if g == nil {
		g = new(gemmCall)
		g.taskFn, g.packFn, g.packBFn = g.tasks, g.packARange, g.packBRange
	}
	return g
}

func putCall(g *gemmCall) {
	g.a, g.b, g.c, g.bias, g.panels, g.then = nil, nil, nil, nil, nil, nil
	if g.convA != nil && g.given == nil {
		convPool.put(g.convA)
	}
	g.convA, g.aRowWords, g.given = nil, 0, nil
	if g.runSums != nil {
		convPool.put(g.runSums)
	}
	g.rowSums, g.runSums = nil, nil
	if g.sharedB != nil {
		packPool.put(g.sharedB)
		g.sharedB, g.shared.data = nil, nil
	}
	calls.put(g)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// sgemmKernel computes C = alpha·op(A)·op(B) + beta·C + 1·biasᵀ with kern,
// adding bias (n, or nil for none) to every row of C; m, n > 0.
func sgemmKernel(kern *kernel, tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32) {
	sgemmKernelThen(kern, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, bias, nil, nil)
}

// sgemmKernelThen is sgemmKernel calling then (nil: none) on each row
// strip of C as its values become final, and setting sums (nil: none) to
// the sums of op(A)'s rows (see GemmAsSums).
func sgemmKernelThen(kern *kernel, tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32, then Then, sums []float32) {
	checkGemm(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	g := getCall()
	g.kern, g.then, g.rowSums = kern, then, sums
	g.tA, g.tB, g.m, g.n, g.k = tA, tB, m, n, k
	g.alpha, g.beta = alpha, beta
	g.a, g.b, g.c, g.lda, g.ldb, g.ldc, g.bias = a, b, c, lda, ldb, ldc, bias
	g.run()
}

// run plans and computes g's product, then recycles g.
func (g *gemmCall) run() {
	defer putCall(g)
	if g.rowSums != nil && !g.sumsInConversion() {
		RowSums(g.tA, g.m, g.k, g.a, g.lda, g.rowSums)
		g.rowSums = nil
	}
	if g.k == 0 || g.alpha == 0 {
		for i := range g.m {
			scaleAddRow(g.c[i*g.ldc:i*g.ldc+g.n], g.beta, g.bias)
		}
		if g.then != nil {
			g.then(0, g.m, 0, g.n)
		}
		return
	}
	parallelOK := g.plan()
	switch {
	case g.given != nil:
		g.convA, g.aRowWords = g.given.data, g.given.stride
	case g.kern.convert:
		g.packAllA(parallelOK)
	}
	if g.kern.strip != nil && g.panels == nil && g.rowTasks > 1 {
		g.packAllB(parallelOK)
	}
	if tasks := g.rowTasks * g.colTasks; tasks > 1 && parallelOK {
		parallel.For(tasks, 1, g.taskFn)
	} else {
		g.tasks(0, tasks)
	}
}

// blockSizes returns the K block kc and the widest column block nc of a
// product with n columns and k steps, for nr-column kernels. The packed B
// block is kc×nc floats: all of op(B)'s columns if they fit in ncMax, with
// K blocks as long as bBlockBytes then allows; otherwise K blocks of up to
// kcMax, and as many columns as fit.
func blockSizes(n, k, nr int) (kc, nc int) { return blockSizesUpTo(n, k, nr, kcMax) }

// blockSizesUpTo is blockSizes with K blocks of at most kcLimit steps.
func blockSizesUpTo(n, k, nr, kcLimit int) (kc, nc int) {
	nc = min(ncMax, ceilDiv(n, nr)*nr)
	if nc < ncMax {
		kcFit := min(kcLimit, max(1, bBlockBytes/(4*nc)))
		return ceilDiv(k, ceilDiv(k, kcFit)), nc
	}
	kc = ceilDiv(k, ceilDiv(k, kcLimit))
	return kc, min(ncMax, max(nr, bBlockBytes/(4*kc)/nr*nr))
}

// blockSizes is the package's blockSizes for kern, counted in packed
// rows: a kernel whose packed rows hold kw K steps (a bfloat16 pair) gets
// K blocks of the same bytes and kernel iterations as the float32 kernel,
// kw times as many steps, a multiple of kw so that only the last block of
// a product pads its last row.
func (kern *kernel) blockSizes(n, k int) (kc, nc int) {
	limit := kcMax
	if kern.kcRows > 0 {
		limit = kern.kcRows
	}
	rows, nc := blockSizesUpTo(n, kern.rows(k), kern.nr, limit)
	if kern.rowAlign > 1 {
		// Every block but the last whole instructions, so that only the
		// last one pads.
		rows = ceilDiv(rows, kern.rowAlign) * kern.rowAlign
	}
	return rows * kern.kw, nc
}

// plan sets the K block, the task grid and which operands are packed, and
// reports whether the product is large enough to split over the workers.
func (g *gemmCall) plan() bool {
	mr, nr := g.kern.mr, g.kern.nr
	m, n, k := g.m, g.n, g.k
	var nc int
	g.kc, nc = g.kern.blockSizes(n, k)
	// op(B) not transposed is read in place when packing would not pay:
	// few rows of C to spread its cost over, or a B small enough to stay
	// in L2 as it is.
	g.directB = g.panels == nil && !g.tB && !g.kern.convert && (m <= directBMaxM || k*n <= directBMaxElems) && (g.kern.masked || n%nr == 0)

	rowPanels, colPanels := ceilDiv(m, mr), ceilDiv(n, nr)
	g.rowTasks, g.colTasks = 1, ceilDiv(n, nc)
	procs := 1
	if m*n*k >= splitWork {
		procs = runtime.GOMAXPROCS(0)
	}
	target := min(tasksPerProc*procs, m*n*k/taskWork)
	parallelOK := procs > 1 && target > 1
	if parallelOK {
		g.rowTasks = min(rowPanels, ceilDiv(target, g.colTasks))
		if g.rowTasks*g.colTasks < target {
			g.colTasks = min(colPanels, ceilDiv(target, g.rowTasks))
		}
	}
	if g.streamsB() {
		g.rowTasks, g.colTasks = 1, g.streamColTasks(colPanels, max(1, target))
	}
	g.rowBlock = ceilDiv(rowPanels, g.rowTasks) * mr
	g.rowTasks = ceilDiv(m, g.rowBlock)
	g.colBlock = ceilDiv(colPanels, g.colTasks) * nr
	g.colTasks = ceilDiv(n, g.colBlock)
	return parallelOK
}

// tasks computes tasks [lo, hi) of the grid: task t is row block
// t % rowTasks of column block t / rowTasks.
func (g *gemmCall) tasks(lo, hi int) {
	kern := g.kern
	// Every tile buffer has the largest size, so buffers never need growing.
	buf := tilePool.get(kern.mr*kcMax + kern.mr*kern.nr)
	var bp, sums *[]float32
	switch {
	case kern.strip != nil && g.panels == nil:
		// All K blocks of the column block (see blockStrips).
		bp = packPool.get(kern.rows(g.k) * kern.rowWords(g.colBlock))
	case !g.directB && g.panels == nil:
		// At least the largest planned size, so that products of every
		// shape share the buffers without growing them.
		bp = packPool.get(max(bBlockBytes/4, g.kc*g.colBlock))
	}
	if kern.strip != nil && g.kc < g.k {
		sums = packPool.get(g.sumRows() * g.colBlock)
	}
	for t := lo; t < hi; t++ {
		i0 := (t % g.rowTasks) * g.rowBlock
		j0 := (t / g.rowTasks) * g.colBlock
		w := workspace{ap: (*buf)[:kern.aCol*kern.rows(g.kc)], tile: (*buf)[len(*buf)-kern.mr*kern.nr:]}
		if bp != nil {
			w.bp = *bp
		}
		i1, j1 := min(i0+g.rowBlock, g.m), min(j0+g.colBlock, g.n)
		if kern.strip != nil {
			if sums != nil {
				w.sums = *sums
			}
			g.blockStrips(w, i0, i1, j0, j1)
			continue
		}
		g.block(w, i0, i1, j0, j1)
	}
	for _, p := range []*[]float32{bp, sums} {
		if p != nil {
			packPool.put(p)
		}
	}
	tilePool.put(buf)
}

// workspace is a task's scratch: a packed A panel (mr, kc), the packed B
// block (nr-column panels of kc rows, nil when B is read in place), an
// edge tile (mr, nr), and for a strip kernel the sums it carries from K
// block to K block.
type workspace struct{ ap, bp, tile, sums []float32 }

// block computes C[i0:i1, j0:j1]: for each K block it packs the block's
// B panels into w.bp (kept in L2 while every A panel of the block passes
// over them), then runs the kernel on each (A panel, B panel) pair. The
// bias is added with the first K block; g.then, if set, runs on each row
// strip as the last K block finishes it. B panels packed in advance are
// read as they are: the hardware prefetcher follows them, one run of
// memory each.
func (g *gemmCall) block(w workspace, i0, i1, j0, j1 int) {
	kern := g.kern
	mr, nr := kern.mr, kern.nr
	for pc := 0; pc < g.k; pc += g.kc {
		kc := min(g.kc, g.k-pc)
		beta, bias := g.beta, g.bias
		if pc > 0 {
			beta, bias = 1, nil
		}
		panel := kern.rows(kc) * kern.bRow // words of a packed B panel
		if bp := w.bp; bp != nil {
			for j := j0; j < j1; j += nr {
				q := (j - j0) / nr
				kern.packB(bp[q*panel:(q+1)*panel], nr, g.b, g.ldb, g.tB, j, min(nr, g.n-j), pc, kc)
			}
		}
		next := g.nextB(pc, j0, j1)
		perCall := ceilDiv(2*next.rows, ceilDiv(i1-i0, mr)*ceilDiv(j1-j0, nr))
		then := g.then
		if pc+kc < g.k {
			then = nil
		}
		for i := i0; i < i1; i += mr {
			rows := min(mr, i1-i)
			pa, rsa, csa := g.aPanel(w.ap, i, rows, pc, kc)
			for j := j0; j < j1; j += nr {
				g.prefetch(&next, perCall)
				pb, ldbk := g.bPanel(w.bp, j-j0, j, pc, kc)
				cols := min(nr, j1-j)
				var pbias *float32
				if bias != nil {
					pbias = &bias[j]
				}
				if cols == nr || kern.masked {
					fn := kern.fn
					if kern.edge[1][1] != nil && (2*rows <= mr || 2*cols <= nr) {
						fn = kern.edge[b2i(2*rows <= mr)][b2i(2*cols <= nr)]
					}
					fn(kern.rows(kc), pa, rsa, csa, pb, ldbk, &g.c[i*g.ldc+j], g.ldc, g.alpha, beta, rows, colMask(cols), pbias)
					continue
				}
				// An unmasked kernel writes whole tiles: compute this one
				// aside and merge its valid part.
				kern.fn(kc, pa, rsa, csa, pb, ldbk, &w.tile[0], nr, 1, 0, rows, colMask(nr), nil)
				g.mergeTile(w.tile, i, j, rows, cols, beta, bias)
			}
			if then != nil {
				then(i, i+rows, j0, j1)
			}
		}
	}
}

// stripSumsBytes bounds the sums blockStrips carries between K blocks
// for one chunk of rows, so that they stay in L2 beside the K block of B.
const stripSumsBytes = 256 << 10

// stripChunk is how many rows of C blockStrips computes K block by K
// block at a time: whole A panels whose carried sums, over a column
// block, fit stripSumsBytes.
func (g *gemmCall) stripChunk() int {
	mr := g.kern.mr
	return max(mr, stripSumsBytes/(4*g.colBlock)/mr*mr)
}

// wavefrontBBytes bounds the packed B, all of K over a column block,
// that blockStrips keeps in L2 to take its strips in a wavefront.
const wavefrontBBytes = 1 << 20

// wavefront reports whether blockStrips takes the strips of a column
// block in a wavefront: K is cut into a few blocks (at least two) whose
// packed B together fits wavefrontBBytes.
func (g *gemmCall) wavefront() bool {
	kern := g.kern
	return g.kc < g.k && 4*kern.rows(g.k)*kern.rowWords(g.colBlock) <= wavefrontBBytes
}

// sumRows is how many rows of C a task's carried sums hold: one A
// panel per K block in a wavefront, else a chunk.
func (g *gemmCall) sumRows() int {
	if g.wavefront() {
		return ceilDiv(g.k, g.kc) * g.kern.mr
	}
	return g.stripChunk()
}

// stripBlock is what the strip calls over a task's columns [j0, j1)
// share: op(B) packed (its column j0 at column jb of b), the number of
// nr-column panels, the mask of the last one and the bias (nil: none).
type stripBlock struct {
	b          panels
	pc0        int // the K step that b's first K block starts at
	jb, j0, j1 int
	colPanels  int
	mask       uint64
	bias       *float32
}

// packBlock packs the K block of s's columns of op(B) that starts at
// step pc into the start of bp, and makes it s.b.
func (g *gemmCall) packBlock(s *stripBlock, pc int, bp []float32) {
	kc := min(g.kc, g.k-pc)
	b := g.b[pc*g.ldb:] // op(B)'s row pc: B's, or column pc of Bᵀ
	if g.tB {
		b = g.b[pc:]
	}
	s.b, s.pc0 = panels{kern: g.kern, k: kc, n: s.j1 - s.j0, kc: g.kc, data: bp}, pc
	s.b.pack(b, g.ldb, g.tB, s.j0, 0, s.b.pieces())
}

// blockStrips computes C[i0:i1, j0:j1] with kern.strip. It packs every K
// block of op(B)'s columns [j0, j1) first (unless they were packed in
// advance), then runs each A panel (mr rows) over all the block's B
// panels of one K block in one call, the A panel in L1 and the K block of
// B in L2. Each output's sums go on from K block to K block through
// w.sums, so that the kernel's epilogue (alpha, beta, the bias) runs
// once, after the last; g.then runs on each strip then.
//
// Where all of K's B fits in L2 (wavefrontBBytes), the strips go in a
// wavefront: step t runs strip t on K block 0, strip t−1 on block 1, …,
// so that one strip in each step ends in C and the stores into C are
// spread over the product rather than left to a pass of their own.
// Otherwise the rows go in chunks (stripChunk), every A panel of a chunk
// passing over one K block of B before the next; where there is one chunk
// and B was not packed in advance, each K block of B is packed just
// before the chunk's strips reach it, all into the start of w.bp (see
// streamsB).
func (g *gemmCall) blockStrips(w workspace, i0, i1, j0, j1 int) {
	kern := g.kern
	mr := kern.mr
	wavefront := g.wavefront()
	chunk := i1 - i0
	if !wavefront && g.kc < g.k {
		chunk = g.stripChunk()
	}
	// Where one chunk of rows passes over B once, each K block of it is
	// packed as the strips reach it, into the same place, so that it
	// stays in L2 rather than all of K going to memory and coming back.
	byBlock := g.panels == nil && !wavefront && chunk >= i1-i0
	s := stripBlock{jb: j0, j0: j0, j1: j1}
	if g.panels != nil {
		s.b = *g.panels
	} else {
		s.b, s.jb = panels{kern: kern, k: g.k, n: j1 - j0, kc: g.kc, data: w.bp}, 0
		if !byBlock {
			s.b.pack(g.b, g.ldb, g.tB, j0, 0, s.b.pieces())
		}
	}
	s.colPanels = ceilDiv(j1-j0, kern.nr)
	s.mask = colMask(j1 - j0 - (s.colPanels-1)*kern.nr)
	if g.bias != nil {
		s.bias = &g.bias[j0]
	}
	if wavefront {
		blocks, strips := ceilDiv(g.k, g.kc), ceilDiv(i1-i0, mr)
		for t := range strips + blocks - 1 {
			for kb := min(t, blocks-1); kb >= max(0, t-strips+1); kb-- {
				i := i0 + (t-kb)*mr
				g.strip(w, &s, i, min(mr, i1-i), kb*g.kc, (t-kb)%blocks)
			}
		}
		return
	}
	for c0 := i0; c0 < i1; c0 += chunk {
		c1 := min(c0+chunk, i1)
		for pc := 0; pc < g.k; pc += g.kc {
			if byBlock {
				g.packBlock(&s, pc, w.bp)
			}
			for i := c0; i < c1; i += stripsPerCall * mr {
				g.strip(w, &s, i, min(stripsPerCall*mr, c1-i), pc, (i-c0)/mr)
			}
		}
	}
}

// stripsPerCall is the most strips of mr rows one call of the strip
// kernel computes. Each call configures the tiles anew (LDTILECFG), at a
// cost of a few tiles' TDPBF16PS: a seventh to a quarter of the kernel's
// time in attention's per-head products, whose strips have one tile or a
// few. The strips of one call are handed to g.then together, so their C
// should still be in L2: 8 strips over a column block of ncMax columns
// are 384 KB.
const stripsPerCall = 8

// strip runs kern.strip on rows [i, i+rows) of C over s's columns for
// the K block that starts at step pc, as strips of mr rows in one call,
// carrying the rows' sums in slots slot, slot+1, … of w.sums between K
// blocks, and g.then on the rows once the last K block has made them
// final. A strip kernel's A is converted row by row (aRowWords), so the
// strips' A rows lie rsa words apart throughout.
func (g *gemmCall) strip(w workspace, s *stripBlock, i, rows, pc, slot int) {
	kern := g.kern
	kc := min(g.kc, g.k-pc)
	flags := 0
	if pc > 0 {
		flags |= stripCarriedIn
	}
	if pc+kc < g.k {
		flags |= stripCarriedOut
	}
	var sums *float32
	if flags != 0 {
		sums = &w.sums[slot*s.colPanels*kern.mr*kern.nr]
	}
	strips := ceilDiv(rows, kern.mr)
	pa, rsa, _ := g.aPanel(w.ap, i, min(kern.mr, rows), pc, kc)
	pb := &s.b.data[s.b.offset(pc-s.pc0, kc, s.jb)]
	kern.strip(kern.rows(kc), pa, rsa, pb, kern.bRow, kern.rows(kc)*kern.bRow, s.colPanels, &g.c[i*g.ldc+s.j0], g.ldc, g.alpha, g.beta, rows-(strips-1)*kern.mr, s.mask, s.bias, sums, flags, strips)
	if flags&stripCarriedOut == 0 && g.then != nil {
		g.then(i, i+rows, s.j0, s.j1)
	}
}

// bRegion is what prefetch brings in: rows rows of width bytes, ld
// elements apart, from g.b[off].
type bRegion struct{ off, rows, width int }

// nextB returns the part of op(B) that block packs for the K block after
// pc, empty if there is none (or B is read in place, or was packed in
// advance). Prefetching it while the current block is computed hides the
// latency of reading weights from memory.
func (g *gemmCall) nextB(pc, j0, j1 int) bRegion {
	next := pc + g.kc
	if g.directB || g.panels != nil || next >= g.k {
		return bRegion{}
	}
	kc := min(g.kc, g.k-next)
	if g.tB {
		return bRegion{j0*g.ldb + next, j1 - j0, 4 * kc}
	}
	return bRegion{next*g.ldb + j0, kc, 4 * (j1 - j0)}
}

// prefetch brings in the next n rows of r and drops them from r.
func (g *gemmCall) prefetch(r *bRegion, n int) {
	if n = min(n, r.rows); n > 0 {
		prefetchRows(&g.b[r.off], 4*g.ldb, n, r.width)
		r.off += n * g.ldb
		r.rows -= n
	}
}

// packAllA converts all of op(A) into g.convA before the tasks run, so
// that each element is converted once rather than once per column block.
// op(A) goes row by row where the kernel reads it so (packARows, or
// packATRows for Aᵀ): aRowWords words a row, whole row panels (the rows past m
// zero). Otherwise every A panel of every K block is packed: the K block
// that starts at step pc, then the panel of rows [i, i+mr), at
// aOffset(pc, kc, i). The work is spread over the workers when the
// product is.
func (g *gemmCall) packAllA(parallelOK bool) {
	kern := g.kern
	panels := ceilDiv(g.m, kern.mr)
	pieces := panels * ceilDiv(g.k, g.kc)
	if kern.convertsRows(g.tA) {
		// A piece is a row panel, all of K, or for Aᵀ a K chunk of
		// every row (packATChunk).
		var words int
		g.aRowWords, words = kern.rowsWords(g.m, g.k)
		g.convA = convPool.get(words)
		pieces = panels
		if g.tA {
			pieces = ceilDiv(g.k, transChunk)
		}
		if g.rowSums != nil {
			g.runSums = convPool.get(pieces * g.m)
		}
	} else {
		g.convA = convPool.get(panels * kern.aCol * kern.rows(g.k))
	}
	if parallelOK {
		parallel.For(pieces, 4, g.packFn)
	} else {
		g.packARange(0, pieces)
	}
	if g.runSums != nil {
		g.addRunSums()
	}
}

// packAllB packs all of op(B) for a strip kernel before the tasks run,
// spread over the workers when the product is: its row tasks would
// otherwise each pack their column block's B again.
func (g *gemmCall) packAllB(parallelOK bool) {
	kern := g.kern
	g.sharedB = packPool.get(kern.rows(g.k) * kern.rowWords(g.n))
	g.shared = panels{kern: kern, k: g.k, n: g.n, kc: g.kc, data: *g.sharedB}
	g.panels = &g.shared
	if parallelOK {
		parallel.For(g.shared.pieces(), 4, g.packBFn)
		return
	}
	g.packBRange(0, g.shared.pieces())
}

// packBRange packs pieces [lo, hi) of g.shared.
func (g *gemmCall) packBRange(lo, hi int) { g.shared.pack(g.b, g.ldb, g.tB, 0, lo, hi) }

// packARange converts pieces [lo, hi) of op(A) (see packAllA): row panel
// t, K chunk t of Aᵀ, or row panel t % panels of K block t / panels.
func (g *gemmCall) packARange(lo, hi int) {
	kern := g.kern
	panels := ceilDiv(g.m, kern.mr)
	for t := lo; t < hi; t++ {
		if g.aRowWords > 0 && g.tA {
			g.packATChunk(t)
			continue
		}
		if g.aRowWords > 0 {
			i, rows := t*kern.mr, min(kern.mr, g.m-t*kern.mr)
			dst := (*g.convA)[i*g.aRowWords : (i+kern.mr)*g.aRowWords]
			src := g.a[i:] // op(A) = Aᵀ: row i is column i of A
			if !g.tA {
				src = g.a[i*g.lda:]
			}
			kern.packARows(dst, g.aRowWords, src, g.lda, rows, g.k)
			g.zeroPastK(dst, rows)
			continue
		}
		pc, i := t/panels*g.kc, t%panels*kern.mr
		kc := min(g.kc, g.k-pc)
		off := g.aOffset(pc, kc, i)
		kern.packA((*g.convA)[off:off+kern.aCol*kern.rows(kc)], kern.mr, g.a, g.lda, g.tA, i, min(kern.mr, g.m-i), pc, kc)
	}
}

// transChunk is the K steps of one piece of Aᵀ that packAllA converts:
// all its rows (the columns of A) over transChunk rows of A, which are
// read front to back, a 64-byte line of each at a time. It is RowSums's
// run, so that each piece can take its run's sums.
const transChunk = sumRun

// packATChunk converts K steps [t·transChunk, (t+1)·transChunk) of every
// row of op(A) = Aᵀ, and after the last of them zeroes each row past K
// and the rows past m. For GemmAsSums it also sums each row's steps into
// the chunk's part of g.runSums.
func (g *gemmCall) packATChunk(t int) {
	kern := g.kern
	k0 := t * transChunk
	steps := min(transChunk, g.k-k0)
	conv := *g.convA
	var sums []float32
	if g.runSums != nil {
		sums = (*g.runSums)[t*g.m : (t+1)*g.m]
		clear(sums)
	}
	kern.packATRows(conv[k0/kern.kw:], g.aRowWords, g.a[k0*g.lda:], g.lda, g.m, steps, sums)
	if k0+steps == g.k {
		g.zeroPastK(conv[:ceilDiv(g.m, kern.mr)*kern.mr*g.aRowWords], g.m)
	}
}

// sumsInConversion says whether packAllA's conversion of op(A) can take
// GemmAsSums's sums: op(A) = Aᵀ converted row by row by this call.
func (g *gemmCall) sumsInConversion() bool {
	return g.tA && g.given == nil && g.kern.convert && g.kern.convertsRows(true) && g.k > 0 && g.alpha != 0
}

// addRunSums sets g.rowSums to the sums of the runs packATChunk summed,
// added in order (see RowSums).
func (g *gemmCall) addRunSums() {
	sums := g.rowSums[:g.m]
	clear(sums)
	for t := range ceilDiv(g.k, transChunk) {
		vec.Add(sums, sums, (*g.runSums)[t*g.m:(t+1)*g.m])
	}
}

// zeroPastK zeroes what the kernel reads of converted rows dst past the
// converted ones (see zeroPastK).
func (g *gemmCall) zeroPastK(dst []float32, rows int) { g.kern.zeroPastK(dst, g.aRowWords, rows, g.k) }

// rowsWords is the layout of op(A) (m, steps) converted row by row: the
// words between rows (rowStride) and the words of all its row panels.
func (k *kernel) rowsWords(m, steps int) (stride, words int) {
	stride = k.rowStride(steps)
	return stride, ceilDiv(m, k.mr) * k.mr * stride
}

// rowStride is the words between rows of op(A) converted row by row
// over k steps: 64-byte aligned and an odd number of 64-byte lines long,
// so that a panel's rows fall in different sets of L1 for every K.
func (k *kernel) rowStride(steps int) int {
	words := ceilDiv(k.rows(steps), 16) * 16
	if words/16%2 == 0 {
		words += 16
	}
	return words
}

// zeroPastK zeroes what the kernel reads of rows dst (stride words
// apart) converted over steps K steps, past the converted ones: each of
// the first rows rows past K, as far as a kernel with rowAlign reads,
// and all of dst after them.
func (k *kernel) zeroPastK(dst []float32, stride, rows, steps int) {
	// The bounds are worked out once: they take divisions by the
	// kernel's sizes, which are not constants.
	if from, to := ceilDiv(steps, k.kw), k.rows(steps); from < to {
		for r := range rows {
			clear(dst[r*stride+from : r*stride+to])
		}
	}
	clear(dst[rows*stride:])
}

// aOffset is where the A panel of rows [i, i+mr) of the K block that
// starts at step pc, kc steps long, begins in g.convA.
func (g *gemmCall) aOffset(pc, kc, i int) int {
	kern := g.kern
	return pc/kern.kw*ceilDiv(g.m, kern.mr)*kern.aCol + i/kern.mr*kern.rows(kc)*kern.aCol
}

// aPanel returns the kernel's A operand for rows [i, i+rows) and K steps
// [pc, pc+kc): whole panels are read in place (measured, that is at least
// as fast as packing them, for A and Aᵀ alike), a partial one is packed
// into ap; a kernel that converts reads what packAllA converted in
// advance.
func (g *gemmCall) aPanel(ap []float32, i, rows, pc, kc int) (pa *float32, rsa, csa int) {
	switch {
	case g.aRowWords > 0:
		return &(*g.convA)[i*g.aRowWords+pc/g.kern.kw], g.aRowWords, 1
	case g.convA != nil:
		return &(*g.convA)[g.aOffset(pc, kc, i)], 1, g.kern.aCol
	case rows == g.kern.mr && !g.tA:
		return &g.a[i*g.lda+pc], g.lda, 1
	case rows == g.kern.mr:
		return &g.a[pc*g.lda+i], 1, g.lda
	}
	g.kern.packA(ap, g.kern.mr, g.a, g.lda, g.tA, i, rows, pc, kc)
	return &ap[0], 1, g.kern.aCol
}

// bPanel returns the kernel's B operand for columns [j, j+nr) and K steps
// [pc, pc+kc): op(B) in place, its panel packed in advance, or the panel
// packed at column jb of the task's block.
func (g *gemmCall) bPanel(bp []float32, jb, j, pc, kc int) (pb *float32, ldb int) {
	kern := g.kern
	switch {
	case g.directB:
		return &g.b[pc*g.ldb+j], g.ldb
	case g.panels != nil:
		return &g.panels.data[g.panels.offset(pc, kc, j)], kern.bRow
	}
	return &bp[(jb/kern.nr)*kern.rows(kc)*kern.bRow], kern.bRow
}

// mergeTile stores the first rows×cols of tile (alpha not yet applied) at
// C[i, j]: C = alpha·tile + beta·C + bias.
func (g *gemmCall) mergeTile(tile []float32, i, j, rows, cols int, beta float32, bias []float32) {
	nr := g.kern.nr
	for r := range rows {
		t := tile[r*nr : r*nr+cols]
		cr := g.c[(i+r)*g.ldc+j : (i+r)*g.ldc+j+cols]
		for x, v := range t {
			y := g.alpha * v
			if beta != 0 {
				y += beta * cr[x]
			}
			if bias != nil {
				y += bias[j+x]
			}
			cr[x] = y
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func colMask(cols int) uint64 {
	if cols >= 64 {
		return ^uint64(0)
	}
	return 1<<cols - 1
}

// packAGo packs rows i0..i0+rows-1, columns p0..p0+kc-1 of op(A) into dst
// as a (mr, kc) panel stored column by column (element (i, p) at
// dst[p·mr+i]), zero in rows rows..mr-1.
func packAGo(dst []float32, mr int, a []float32, lda int, tA bool, i0, rows, p0, kc int) {
	dst = dst[:mr*kc]
	if tA {
		for p := range kc {
			d := dst[p*mr : p*mr+mr]
			copy(d, a[(p0+p)*lda+i0:(p0+p)*lda+i0+rows])
			clear(d[rows:])
		}
		return
	}
	for r := range rows {
		src := a[(i0+r)*lda+p0 : (i0+r)*lda+p0+kc]
		for p, v := range src {
			dst[p*mr+r] = v
		}
	}
	for r := rows; r < mr; r++ {
		for p := range kc {
			dst[p*mr+r] = 0
		}
	}
}

// packBGo packs rows p0..p0+kc-1, columns j0..j0+cols-1 of op(B) into dst
// as a (kc, nr) panel stored row by row, zero in columns cols..nr-1.
func packBGo(dst []float32, nr int, b []float32, ldb int, tB bool, j0, cols, p0, kc int) {
	dst = dst[:nr*kc]
	if !tB {
		for p := range kc {
			d := dst[p*nr : p*nr+nr]
			copy(d, b[(p0+p)*ldb+j0:(p0+p)*ldb+j0+cols])
			clear(d[cols:])
		}
		return
	}
	for x := range cols {
		src := b[(j0+x)*ldb+p0 : (j0+x)*ldb+p0+kc]
		for p, v := range src {
			dst[p*nr+x] = v
		}
	}
	for x := cols; x < nr; x++ {
		for p := range kc {
			dst[p*nr+x] = 0
		}
	}
}
