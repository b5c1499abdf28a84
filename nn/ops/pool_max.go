package ops

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/parallel"
)

// MaxPool2d takes the maximum over k×k windows moved by stride, with
// implicit −∞ padding of pad on every side: PyTorch's nn.MaxPool2d
// (dilation 1, floor mode). x is (B, C, H, W); the result is
// (B, C, H', W') with H' = (H + 2·pad − k)/stride + 1, likewise W'.
// pad may be at most k/2, so every window holds an input element. The
// gradient goes to the first maximum of each window in row-major order.
func MaxPool2d(x *gorgonia.Node, k, stride, pad int) (*gorgonia.Node, error) {
	if _, err := maxPoolGeom(x.Shape(), k, stride, pad); err != nil {
		return nil, err
	}
	op := &maxPoolOp{k: k, stride: stride, pad: pad}
	op.base = base{name: "MaxPool2d", arity: 1, params: func(h hash.Hash) { fmt.Fprint(h, op.k, op.stride, op.pad) }}
	return gorgonia.ApplyOp(op, x)
}

// maxPoolGeom is the window geometry over one (H, W) plane of x.
func maxPoolGeom(xs tensor.Shape, k, stride, pad int) (convGeom, error) {
	if len(xs) != 4 {
		return convGeom{}, fmt.Errorf("MaxPool2d: x %v must be (B, C, H, W)", xs)
	}
	if pad > k/2 {
		return convGeom{}, fmt.Errorf("MaxPool2d: padding %d exceeds half the window %d", pad, k)
	}
	g, err := newConvGeom(1, xs[2], xs[3], k, k, stride, pad)
	if err != nil {
		return convGeom{}, fmt.Errorf("MaxPool2d: x %v: %w", xs, err)
	}
	return g, nil
}

type maxPoolOp struct {
	base
	k, stride, pad int
}

func (op *maxPoolOp) Type() hm.Type { return fnType(4, 4) }

func (op *maxPoolOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	g, err := maxPoolGeom(s, op.k, op.stride, op.pad)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[0], s[1], g.oh, g.ow}, nil
}

func (op *maxPoolOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *maxPoolOp) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("MaxPool2d", in...)
	if err != nil {
		return nil, err
	}
	s := in[0].Shape()
	g, err := maxPoolGeom(s, op.k, op.stride, op.pad)
	if err != nil {
		return nil, err
	}
	out := output(prealloc, dt, tensor.Shape{s[0], s[1], g.oh, g.ow})
	if dt == tensor.Float32 {
		maxPoolForward(g, floats[float32](in[0]), floats[float32](out))
	} else {
		maxPoolForward(g, floats[float64](in[0]), floats[float64](out))
	}
	return out, nil
}

// argmaxWindow returns the index in plane (H, W) of the first maximum of
// output position (oy, ox)'s window, NaN counting as the maximum, as in
// PyTorch.
func argmaxWindow[T Float](g convGeom, plane []T, oy, ox int) int {
	y0, x0 := oy*g.stride-g.pad, ox*g.stride-g.pad
	ylo, yhi := max(0, y0), min(g.h, y0+g.kh)
	xlo, xhi := max(0, x0), min(g.w, x0+g.kw)
	best, idx := T(math.Inf(-1)), ylo*g.w+xlo
	for iy := ylo; iy < yhi; iy++ {
		row := plane[iy*g.w : (iy+1)*g.w]
		for ix := xlo; ix < xhi; ix++ {
			if v := row[ix]; v > best || v != v {
				best, idx = v, iy*g.w+ix
			}
		}
	}
	return idx
}

func maxPoolForward[T Float](g convGeom, x, y []T) {
	planes := len(y) / max(1, g.oh*g.ow)
	parallel.Loop(planes, max(1, 4096/max(1, g.oh*g.ow*g.kh*g.kw)), maxPoolPlanes[T]{g: g, x: x, y: y})
}

// maxPoolPlanes is max pooling over a range of planes: y from x forward,
// dx from x and dy backward (dy set).
type maxPoolPlanes[T Float] struct {
	g            convGeom
	x, y, dy, dx []T
}

func (k *maxPoolPlanes[T]) Range(lo, hi int) {
	g := k.g
	in, on := g.h*g.w, g.oh*g.ow
	for p := lo; p < hi; p++ {
		plane := k.x[p*in : (p+1)*in]
		if k.dy == nil {
			out := k.y[p*on : (p+1)*on]
			for oy := 0; oy < g.oh; oy++ {
				for ox := 0; ox < g.ow; ox++ {
					out[oy*g.ow+ox] = plane[argmaxWindow(g, plane, oy, ox)]
				}
			}
			continue
		}
		grad, d := k.dy[p*on:(p+1)*on], k.dx[p*in:(p+1)*in]
		clear(d)
		for oy := 0; oy < g.oh; oy++ {
			for ox := 0; ox < g.ow; ox++ {
				d[argmaxWindow(g, plane, oy, ox)] += grad[oy*g.ow+ox]
			}
		}
	}
}

func (op *maxPoolOp) DiffWRT(int) []bool { return []bool{true} }

func (op *maxPoolOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	dx, err := gorgonia.ApplyOp(newMaxPoolGrad(op), inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx}, nil
}

// maxPoolGrad routes each dy element to its window's maximum in x:
// x (B, C, H, W), dy (B, C, H', W') → (B, C, H, W).
type maxPoolGrad struct {
	base
	fwd *maxPoolOp
}

func newMaxPoolGrad(fwd *maxPoolOp) *maxPoolGrad {
	op := &maxPoolGrad{fwd: fwd}
	op.base = base{name: "MaxPool2dGrad", arity: 2, params: func(h hash.Hash) { fmt.Fprint(h, fwd.k, fwd.stride, fwd.pad) }}
	return op
}

func (op *maxPoolGrad) Type() hm.Type { return fnType(4, 4, 4) }

func (op *maxPoolGrad) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *maxPoolGrad) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *maxPoolGrad) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("MaxPool2dGrad", in...)
	if err != nil {
		return nil, err
	}
	s := in[0].Shape()
	g, err := maxPoolGeom(s, op.fwd.k, op.fwd.stride, op.fwd.pad)
	if err != nil {
		return nil, err
	}
	out := output(prealloc, dt, s)
	if dt == tensor.Float32 {
		maxPoolBackward(g, floats[float32](in[0]), floats[float32](in[1]), floats[float32](out))
	} else {
		maxPoolBackward(g, floats[float64](in[0]), floats[float64](in[1]), floats[float64](out))
	}
	return out, nil
}

func maxPoolBackward[T Float](g convGeom, x, dy, dx []T) {
	planes := len(dy) / max(1, g.oh*g.ow)
	parallel.Loop(planes, max(1, 4096/max(1, g.oh*g.ow*g.kh*g.kw)), maxPoolPlanes[T]{g: g, x: x, dy: dy, dx: dx})
}
