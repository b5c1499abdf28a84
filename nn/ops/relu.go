package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/parallel"
	"github.com/vit-train/vit-train/nn/vec"
)

// ReLU returns max(x, 0) element-wise (NaN stays NaN), for x of any shape.
// Its gradient passes dy where the output is positive.
func ReLU(x *gorgonia.Node) (*gorgonia.Node, error) {
	op := &reluOp{dims: x.Dims()}
	op.base = base{name: "ReLU", arity: 1, params: func(h hash.Hash) { fmt.Fprint(h, op.dims) }}
	return gorgonia.ApplyOp(op, x)
}

type reluOp struct {
	base
	dims int
}

func (op *reluOp) Type() hm.Type { return fnType(op.dims, op.dims) }

func (op *reluOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *reluOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *reluOp) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("ReLU", in...)
	if err != nil {
		return nil, err
	}
	out := output(prealloc, dt, in[0].Shape())
	if dt == tensor.Float32 {
		reluForward(floats[float32](in[0]), floats[float32](out))
	} else {
		reluForward(floats[float64](in[0]), floats[float64](out))
	}
	return out, nil
}

func reluForward[T Float](x, y []T) {
	parallel.Loop(len(x), 32768, reluElems[T]{x: x, y: y})
}

// reluElems sets y = max(x, 0) over a range of elements or, for the
// backward pass (dy set), y = dy where x > 0 and 0 elsewhere, x being the
// forward's output: for float32 with vec.ReLU and vec.ReLUGrad, whose
// values are those of the loops below.
type reluElems[T Float] struct{ x, dy, y []T }

func (k *reluElems[T]) Range(lo, hi int) {
	if x, ok := any(k.x).([]float32); ok {
		y := any(k.y).([]float32)
		if k.dy == nil {
			vec.ReLU(y[lo:hi], x[lo:hi])
		} else {
			vec.ReLUGrad(y[lo:hi], x[lo:hi], any(k.dy).([]float32)[lo:hi])
		}
		return
	}
	if k.dy == nil {
		for i, v := range k.x[lo:hi] {
			if v < 0 {
				v = 0
			}
			k.y[lo+i] = v
		}
		return
	}
	for i, v := range k.x[lo:hi] {
		g := k.dy[lo+i]
		if !(v > 0) {
			g = 0
		}
		k.y[lo+i] = g
	}
}

func (op *reluOp) DiffWRT(int) []bool { return []bool{true} }

func (op *reluOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	// ReLUGrad: y, dy → dx = dy where y > 0, else 0, all one shape.
	gop := newSameShape2("ReLUGrad", op.dims, reluBackward[float32], reluBackward[float64])
	dx, err := gorgonia.ApplyOp(gop, output, grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx}, nil
}

func reluBackward[T Float](y, dy, dx []T) {
	parallel.Loop(len(y), 32768, reluElems[T]{x: y, dy: dy, y: dx})
}
