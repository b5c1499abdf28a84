package ops

import (
	"unsafe"

	"gorgonia.org/gorgonia"

	"github.com/vit-train/vit-train/nn/blas"
)

// WeightFreezer is an op that can keep its weight operand, argument
// WeightArg, packed for the matrix kernels across runs rather than pack it
// on every product (see blas.PackB).
type WeightFreezer interface {
	gorgonia.Op
	WeightArg() int
	// FreezeWeight(true) makes the op pack its weight on its next run and
	// reuse that copy while the weight is the same tensor: the weight's
	// values must not change meanwhile. FreezeWeight(false) drops the copy.
	FreezeWeight(frozen bool)
}

// frozenWeight is a weight packed once, and the backing array it was
// packed from.
type frozenWeight struct {
	src    unsafe.Pointer
	packed any // *blas.PackedB[float32] or *blas.PackedB[float64], nil before the first run
}

// WeightArg is the weight's argument index: Linear's w.
func (op *linearOp) WeightArg() int { return 1 }

// FreezeWeight implements WeightFreezer.
func (op *linearOp) FreezeWeight(frozen bool) {
	op.frozen = nil
	if frozen {
		op.frozen = new(frozenWeight)
	}
}

// packedWeight returns f's copy of w, (N, K) used as Wᵀ, packed for v's
// products, packing it when f has none of this tensor.
func packedWeight[T Float](v blas.Variant, f *frozenWeight, w []T, n, k int) *blas.PackedB[T] {
	if p, ok := f.packed.(*blas.PackedB[T]); ok && f.src == unsafe.Pointer(unsafe.SliceData(w)) {
		return p
	}
	p := blas.PackBAs(v, true, k, n, w, k)
	f.src, f.packed = unsafe.Pointer(unsafe.SliceData(w)), p
	return p
}
