package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/parallel"
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
	op := &addOp{dims: a.Dims()}
	op.base = base{name: "Add", arity: 2, params: func(h hash.Hash) { fmt.Fprint(h, op.dims) }}
	return gorgonia.ApplyOp(op, a, b)
}

type addOp struct {
	base
	dims int
}

func (op *addOp) Type() hm.Type { return fnType(op.dims, op.dims, op.dims) }

func (op *addOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *addOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *addOp) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("Add", in...)
	if err != nil {
		return nil, err
	}
	out := output(prealloc, dt, in[0].Shape())
	if dt == tensor.Float32 {
		addKernel(floats[float32](in[0]), floats[float32](in[1]), floats[float32](out))
	} else {
		addKernel(floats[float64](in[0]), floats[float64](in[1]), floats[float64](out))
	}
	return out, nil
}

func addKernel[T Float](a, b, out []T) {
	parallel.For(len(a), rowsWorkGrain, func(lo, hi int) {
		bs, os := b[lo:hi], out[lo:hi]
		for i, v := range a[lo:hi] {
			os[i] = v + bs[i]
		}
	})
}

func (op *addOp) DiffWRT(int) []bool { return []bool{true, true} }

func (op *addOp) SymDiff(_ gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	return gorgonia.Nodes{grad, grad}, nil
}
