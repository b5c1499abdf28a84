package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// sameShape2 is an op of two inputs of one shape whose output, of that
// shape too, a kernel computes element by element (Add, ReLUGrad). The
// kernels are run for float32 and float64 inputs; the name identifies the
// op in graphs and hashes.
type sameShape2 struct {
	base
	dims int
	f32  func(a, b, out []float32)
	f64  func(a, b, out []float64)
}

func newSameShape2(name string, dims int, f32 func(a, b, out []float32), f64 func(a, b, out []float64)) *sameShape2 {
	op := &sameShape2{dims: dims, f32: f32, f64: f64}
	op.base = base{name: name, arity: 2, params: func(h hash.Hash) { fmt.Fprint(h, dims) }}
	return op
}

func (op *sameShape2) Type() hm.Type { return fnType(op.dims, op.dims, op.dims) }

func (op *sameShape2) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *sameShape2) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *sameShape2) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes(op.name, in...)
	if err != nil {
		return nil, err
	}
	out := output(prealloc, dt, in[0].Shape())
	if dt == tensor.Float32 {
		op.f32(floats[float32](in[0]), floats[float32](in[1]), floats[float32](out))
	} else {
		op.f64(floats[float64](in[0]), floats[float64](in[1]), floats[float64](out))
	}
	return out, nil
}
