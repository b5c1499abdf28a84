package ops

import (
	"fmt"

	"gorgonia.org/gorgonia"

	"github.com/vit-train/vit-train/nn/parallel"
	"github.com/vit-train/vit-train/nn/vec"
)

// Add returns a + b elementwise for two tensors of the same shape, such as a
// residual connection x + f(x). Both inputs receive the incoming gradient
// node itself.
func Add(a, b *gorgonia.Node) (*gorgonia.Node, error) {
	if !a.Shape().Eq(b.Shape()) {
		return nil, fmt.Errorf("Add: shapes %v and %v differ", a.Shape(), b.Shape())
	}
	if a.Dims() < 1 {
		return nil, fmt.Errorf("Add: inputs %v need at least 1 dim", a.Shape())
	}
	return gorgonia.ApplyOp(newAdd(a.Dims()), a, b)
}

// addOp is Add: a, b → a + b, all one shape.
type addOp struct{ *sameShape2 }

// newAdd returns Add's op for tensors of dims dimensions.
func newAdd(dims int) *addOp {
	return &addOp{newSameShape2("Add", dims, addKernel[float32], addKernel[float64])}
}

func addKernel[T Float](a, b, out []T) {
	parallel.Loop(len(a), rowsWorkGrain, addElems[T]{a, b, out})
}

// addElems sets out = a + b over a range of elements.
type addElems[T Float] struct{ a, b, out []T }

func (k *addElems[T]) Range(lo, hi int) {
	if a32, ok := any(k.a).([]float32); ok {
		vec.Add(any(k.out).([]float32)[lo:hi], a32[lo:hi], any(k.b).([]float32)[lo:hi])
		return
	}
	bs, os := k.b[lo:hi], k.out[lo:hi]
	for i, v := range k.a[lo:hi] {
		os[i] = v + bs[i]
	}
}

func (op *addOp) DiffWRT(int) []bool { return []bool{true, true} }

func (op *addOp) SymDiff(_ gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	return gorgonia.Nodes{grad, grad}, nil
}
