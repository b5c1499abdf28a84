package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/parallel"
)

// GlobalAvgPool averages each channel over its spatial positions:
// (B, C, H, W) → (B, C), PyTorch's adaptive_avg_pool2d(x, 1) flattened.
// Any (B, C, ...) of rank 3 or more is accepted.
func GlobalAvgPool(x *gorgonia.Node) (*gorgonia.Node, error) {
	if x.Dims() < 3 {
		return nil, fmt.Errorf("GlobalAvgPool: x %v needs spatial axes after (B, C)", x.Shape())
	}
	op := &globalAvgPoolOp{dims: x.Dims()}
	op.base = base{name: "GlobalAvgPool", arity: 1, params: func(h hash.Hash) { fmt.Fprint(h, op.dims) }}
	return gorgonia.ApplyOp(op, x)
}

type globalAvgPoolOp struct {
	base
	dims int
}

func (op *globalAvgPoolOp) Type() hm.Type { return fnType(2, op.dims) }

func (op *globalAvgPoolOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[0], s[1]}, nil
}

func (op *globalAvgPoolOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *globalAvgPoolOp) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("GlobalAvgPool", in...)
	if err != nil {
		return nil, err
	}
	s := in[0].Shape()
	out := output(prealloc, dt, tensor.Shape{s[0], s[1]})
	if dt == tensor.Float32 {
		avgPlanes(floats[float32](in[0]), floats[float32](out))
	} else {
		avgPlanes(floats[float64](in[0]), floats[float64](out))
	}
	return out, nil
}

// avgPlanes writes the mean of each of the len(y) equal planes of x into y.
func avgPlanes[T Float](x, y []T) {
	if len(y) == 0 {
		return
	}
	parallel.Loop(len(y), max(1, 16384/max(1, len(x)/len(y))), planeMeans[T]{x, y})
}

// planeMeans is avgPlanes over a range of planes.
type planeMeans[T Float] struct{ x, y []T }

func (k *planeMeans[T]) Range(lo, hi int) {
	plane := len(k.x) / len(k.y)
	for r := lo; r < hi; r++ {
		var acc float64
		for _, v := range k.x[r*plane : (r+1)*plane] {
			acc += float64(v)
		}
		k.y[r] = T(acc / float64(plane))
	}
}

func (op *globalAvgPoolOp) DiffWRT(int) []bool { return []bool{true} }

func (op *globalAvgPoolOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	dx, err := gorgonia.ApplyOp(newGlobalAvgPoolGrad(inputs[0].Shape()), grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx}, nil
}

// globalAvgPoolGrad spreads dy (B, C) evenly over each plane: dx = dy/(H·W).
type globalAvgPoolGrad struct {
	base
	xShape tensor.Shape
}

func newGlobalAvgPoolGrad(xShape tensor.Shape) *globalAvgPoolGrad {
	op := &globalAvgPoolGrad{xShape: xShape.Clone()}
	op.base = base{name: "GlobalAvgPoolGrad", arity: 1, params: func(h hash.Hash) { fmt.Fprint(h, op.xShape) }}
	return op
}

func (op *globalAvgPoolGrad) Type() hm.Type { return fnType(len(op.xShape), 2) }

func (op *globalAvgPoolGrad) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.xShape.Clone(), nil
}

func (op *globalAvgPoolGrad) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *globalAvgPoolGrad) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("GlobalAvgPoolGrad", in...)
	if err != nil {
		return nil, err
	}
	out := output(prealloc, dt, op.xShape)
	if dt == tensor.Float32 {
		spreadPlanes(floats[float32](in[0]), floats[float32](out))
	} else {
		spreadPlanes(floats[float64](in[0]), floats[float64](out))
	}
	return out, nil
}

// spreadPlanes sets every element of plane r of dx to dy[r]/plane.
func spreadPlanes[T Float](dy, dx []T) {
	if len(dy) == 0 {
		return
	}
	parallel.Loop(len(dy), max(1, 16384/max(1, len(dx)/len(dy))), planeSpread[T]{dx, dy})
}

// planeSpread is spreadPlanes over a range of planes: x (planes of dx) from
// y (dy).
type planeSpread[T Float] planeMeans[T]

func (k *planeSpread[T]) Range(lo, hi int) {
	plane := len(k.x) / len(k.y)
	for r := lo; r < hi; r++ {
		v := T(float64(k.y[r]) / float64(plane))
		row := k.x[r*plane : (r+1)*plane]
		for i := range row {
			row[i] = v
		}
	}
}
