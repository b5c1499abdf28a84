package ops

import (
	"sync/atomic"
	"unsafe"

	"gorgonia.org/gorgonia"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/parallel"
)

// WeightPacker is a training graph's op that can keep its weight operand,
// argument WeightArg, packed for its low-precision products from step to
// step: W (N, K), its rows of K values, packed as the forward product's Wᵀ
// and as the input gradient's W. An optimizer that reports the rows it
// updates (optim.RowReporter) repacks them through RepackWeightRows while
// they are still in cache; a forward pass that finds any row not
// repacked since StartRepack packs the whole weight again, as the op does
// on every pass without KeepWeightPacked.
type WeightPacker interface {
	gorgonia.Op
	WeightArg() int
	// KeepWeightPacked makes the op keep its weight packed, and reports
	// whether it does: only float32 products in a low-precision variant
	// gain from it.
	KeepWeightPacked() bool
	// WeightRows returns the weight's row length K and the rows that
	// RepackWeightRows takes at a time.
	WeightRows() (rowLen, align int)
	// StartRepack marks the packed copies out of date: the weight is
	// about to change.
	StartRepack()
	// RepackWeightRows packs rows [r0, r1) of w, the weight's values,
	// into the packed copies; r0 and r1 are multiples of WeightRows's
	// align, or r1 is N. Calls for disjoint rows may run at once. Once
	// every row has been repacked since StartRepack, the copies are
	// current again.
	RepackWeightRows(w []float32, r0, r1 int)
}

// weightPacks is a linear layer's weight W (N, K) kept packed for its two
// products (see WeightPacker).
type weightPacks struct {
	forward   *blas.PackedB[float32] // Wᵀ, (K, N): the forward product's B
	inputGrad *blas.PackedB[float32] // W, (N, K): the input gradient's B
	src       unsafe.Pointer         // W's backing array
	n, k      int
	repacked  atomic.Int64 // rows repacked since StartRepack
	current   atomic.Bool  // forward and inputGrad hold W's values

	// w, align (WeightRows's) and repackAll (bound once) repack all of w
	// in parallel.
	w         []float32
	align     int
	repackAll func(lo, hi int)
}

// KeepWeightPacked implements WeightPacker.
func (op *linearOp) KeepWeightPacked() bool {
	if op.gemm.IsFP32() {
		return false
	}
	_, align := op.WeightRows()
	op.packs = &weightPacks{align: align}
	return true
}

// WeightRows implements WeightPacker.
func (op *linearOp) WeightRows() (rowLen, align int) {
	n, k := op.wRows, op.wCols
	return k, commonRows(blas.RepackAlign(op.gemm, true, k), blas.RepackAlign(op.gemm, false, n))
}

// commonRows is a number of rows that is a multiple of both a and b.
func commonRows(a, b int) int {
	if a%b == 0 {
		return a
	}
	return a * b
}

// StartRepack implements WeightPacker.
func (op *linearOp) StartRepack() {
	if p := op.packs; p != nil {
		p.current.Store(false)
		p.repacked.Store(0)
	}
}

// RepackWeightRows implements WeightPacker.
func (op *linearOp) RepackWeightRows(w []float32, r0, r1 int) {
	p := op.packs
	if p == nil || p.forward == nil || p.src != unsafe.Pointer(unsafe.SliceData(w)) {
		return
	}
	p.repack(w, r0, r1)
	if p.repacked.Add(int64(r1-r0)) == int64(p.n) {
		p.current.Store(true)
	}
}

// forwardB returns the forward product's B, Wᵀ packed for v, from w (n,
// k), first packing w for both products unless the copies are current.
func (p *weightPacks) forwardB(v blas.Variant, w []float32, n, k int) *blas.PackedB[float32] {
	src := unsafe.Pointer(unsafe.SliceData(w))
	switch {
	case p.forward == nil || p.src != src:
		p.forward = blas.PackBAs(v, true, k, n, w, k)
		p.inputGrad = blas.PackBAs(v, false, n, k, w, k)
		p.src, p.n, p.k = src, n, k
		p.repackAll = p.repackGroups
	case !p.current.Load():
		p.w = w
		parallel.For((n+p.align-1)/p.align, 4, p.repackAll)
		p.w = nil
	}
	p.current.Store(true)
	return p.forward
}

// repackGroups repacks groups [lo, hi) of p.align rows of p.w.
func (p *weightPacks) repackGroups(lo, hi int) {
	p.repack(p.w, lo*p.align, min(hi*p.align, p.n))
}

// repack packs rows [r0, r1) of w into both copies.
func (p *weightPacks) repack(w []float32, r0, r1 int) {
	p.forward.RepackRows(w, p.k, r0, r1)
	p.inputGrad.RepackRows(w, p.k, r0, r1)
}

// inputGradB returns the input gradient's B, W packed, where the copies
// hold w's values, else nil.
func (p *weightPacks) inputGradB(w []float32) *blas.PackedB[float32] {
	if p == nil || !p.current.Load() || p.src != unsafe.Pointer(unsafe.SliceData(w)) {
		return nil
	}
	return p.inputGrad
}
