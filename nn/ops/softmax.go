package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Softmax returns softmax over the last axis of x (..., C): e^x / Σ e^x,
// computed with the row maximum subtracted, so logits of any magnitude give
// finite results. The result is shaped like x.
func Softmax(x *gorgonia.Node) (*gorgonia.Node, error) {
	return applySoftmax(x, false)
}

// LogSoftmax returns log(softmax(x)) over the last axis of x (..., C),
// computed as x − max − log Σ e^(x−max). The result is shaped like x.
func LogSoftmax(x *gorgonia.Node) (*gorgonia.Node, error) {
	return applySoftmax(x, true)
}

func applySoftmax(x *gorgonia.Node, log bool) (*gorgonia.Node, error) {
	op := newSoftmaxOp(x.Dims(), log, false)
	if x.Dims() < 1 {
		return nil, fmt.Errorf("%s: x %v needs at least 1 dim", op.name, x.Shape())
	}
	return gorgonia.ApplyOp(op, x)
}

// softmaxOp is Softmax or LogSoftmax (log), or with grad their backward
// dx = f(y, dy) taking (y, dy).
type softmaxOp struct {
	base
	dims      int
	log, grad bool
}

func newSoftmaxOp(dims int, log, grad bool) *softmaxOp {
	op := &softmaxOp{dims: dims, log: log, grad: grad}
	name := "Softmax"
	if log {
		name = "LogSoftmax"
	}
	arity := 1
	if grad {
		name += "Grad"
		arity = 2
	}
	op.base = base{name: name, arity: arity, params: func(h hash.Hash) { fmt.Fprint(h, op.dims) }}
	return op
}

func (op *softmaxOp) Type() hm.Type {
	if op.grad {
		return fnType(op.dims, op.dims, op.dims)
	}
	return fnType(op.dims, op.dims)
}

func (op *softmaxOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *softmaxOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *softmaxOp) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes(op.name, in...)
	if err != nil {
		return nil, err
	}
	s := in[0].Shape()
	out := output(prealloc, dt, s)
	n := s[len(s)-1]
	if dt == tensor.Float32 {
		softmaxDo[float32](op, in, out, n)
	} else {
		softmaxDo[float64](op, in, out, n)
	}
	return out, nil
}

func softmaxDo[T Float](op *softmaxOp, in []gorgonia.Value, out *tensor.Dense, n int) {
	x, y := floats[T](in[0]), floats[T](out)
	switch {
	case op.grad && op.log:
		LogSoftmaxRowsGrad(x, floats[T](in[1]), y, n)
	case op.grad:
		SoftmaxRowsGrad(x, floats[T](in[1]), y, n)
	case op.log:
		LogSoftmaxRows(x, y, n)
	default:
		SoftmaxRows(x, y, n)
	}
}

// DiffWRT marks x differentiable; the backward form has no derivative.
func (op *softmaxOp) DiffWRT(inputs int) []bool {
	d := make([]bool, inputs)
	d[0] = !op.grad
	return d
}

func (op *softmaxOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if op.grad {
		return nil, fmt.Errorf("%s: no second derivative", op.name)
	}
	dx, err := gorgonia.ApplyOp(newSoftmaxOp(op.dims, op.log, true), output, grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx}, nil
}
