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

// GELU returns x·Φ(x) elementwise, Φ the standard normal CDF: the exact (erf)
// GELU of PyTorch's nn.GELU() and timm. x is any shape; the result is shaped
// like x. float64 uses math.Erfc; float32 uses the SIMD kernels of package
// vec (vec.Exp32 and the Abramowitz–Stegun erfc, |ΔΦ| < 1e-6). The backward
// is dy·(Φ(x) + x·φ(x)).
func GELU(x *gorgonia.Node) (*gorgonia.Node, error) {
	if x.Dims() < 1 {
		return nil, fmt.Errorf("GELU: x %v needs at least 1 dim", x.Shape())
	}
	return gorgonia.ApplyOp(newGELUOp(x.Dims(), false), x)
}

// geluOp is y = GELU(x), or with grad its backward dx = dy·GELU'(x) taking
// (y, dy). Once differentiated, the forward also keeps GELU'(x) (op-owned,
// reused), which the backward multiplies by dy instead of evaluating Φ and φ
// a second time; y is an input of the backward only to order it after the
// forward.
type geluOp struct {
	base
	dims    int
	grad    bool
	fwd     *geluOp // the forward op, for a backward op
	keep    bool    // the forward keeps its slope for a backward op
	slope32 []float32
	slope64 []float64
}

func newGELUOp(dims int, grad bool) *geluOp {
	op := &geluOp{dims: dims, grad: grad}
	name, arity := "GELU", 1
	if grad {
		name, arity = "GELUGrad", 2
	}
	op.base = base{name: name, arity: arity, params: func(h hash.Hash) { fmt.Fprint(h, op.dims) }}
	return op
}

func (op *geluOp) Type() hm.Type {
	if op.grad {
		return fnType(op.dims, op.dims, op.dims)
	}
	return fnType(op.dims, op.dims)
}

func (op *geluOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *geluOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *geluOp) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes(op.name, in...)
	if err != nil {
		return nil, err
	}
	out := output(prealloc, dt, in[0].Shape())
	n := in[0].Shape().TotalSize()
	switch {
	case op.grad && dt == tensor.Float32:
		scaleBy(floats[float32](in[1]), op.fwd.slope32[:n], floats[float32](out))
	case op.grad:
		scaleBy(floats[float64](in[1]), op.fwd.slope64[:n], floats[float64](out))
	case dt == tensor.Float32:
		if op.keep {
			op.slope32 = grow(op.slope32, n)
		}
		geluDo(floats[float32](in[0]), floats[float32](out), op.slope32)
	default:
		if op.keep {
			op.slope64 = grow(op.slope64, n)
		}
		geluDo(floats[float64](in[0]), floats[float64](out), op.slope64)
	}
	return out, nil
}

// geluDo sets y = GELU(x) and, when slope is not nil, slope = GELU'(x).
func geluDo[T Float](x, y, slope []T) {
	parallel.Loop(len(x), rowsWorkGrain, geluElems[T]{x, y, slope})
}

// geluElems is geluDo over a range of elements.
type geluElems[T Float] struct{ x, y, slope []T }

func (k *geluElems[T]) Range(lo, hi int) {
	if k.slope != nil {
		geluForwardSlope(k.x[lo:hi], k.y[lo:hi], k.slope[lo:hi])
		vec.StoreFence()
	} else {
		geluForward(k.x[lo:hi], k.y[lo:hi])
	}
}

// scaleBy sets out = dy·s elementwise, in parallel.
func scaleBy[T Float](dy, s, out []T) {
	parallel.Loop(len(dy), rowsWorkGrain, productElems[T]{dy, s, out})
}

// productElems sets out = a·b over a range of elements.
type productElems[T Float] struct{ a, b, out []T }

func (k *productElems[T]) Range(lo, hi int) {
	if a32, ok := any(k.a).([]float32); ok {
		vec.Mul(any(k.out).([]float32)[lo:hi], a32[lo:hi], any(k.b).([]float32)[lo:hi])
		return
	}
	for i := lo; i < hi; i++ {
		k.out[i] = k.a[i] * k.b[i]
	}
}

// geluForwardSlope sets y = x·Φ(x) and s = Φ(x) + x·φ(x), s in float32
// with streaming stores (the backward reads it after the rest of the
// forward pass; the caller fences).
func geluForwardSlope[T Float](x, y, s []T) {
	switch xs := any(x).(type) {
	case []float32:
		vec.GELUAndDerivStreaming(any(y).([]float32), any(s).([]float32), xs)
	case []float64:
		ys, ss := any(y).([]float64)[:len(xs)], any(s).([]float64)[:len(xs)]
		for i, v := range xs {
			c, p := normal64(v)
			ys[i], ss[i] = v*c, c+v*p
		}
	}
}

// geluForward sets y = x·Φ(x).
func geluForward[T Float](x, y []T) {
	switch xs := any(x).(type) {
	case []float32:
		vec.GELU(any(y).([]float32), xs)
	case []float64:
		ys := any(y).([]float64)[:len(xs)]
		for i, v := range xs {
			c, _ := normal64(v)
			ys[i] = v * c
		}
	}
}

// DiffWRT marks x differentiable; the backward form has no derivative.
func (op *geluOp) DiffWRT(inputs int) []bool {
	d := make([]bool, inputs)
	d[0] = !op.grad
	return d
}

func (op *geluOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if op.grad {
		return nil, fmt.Errorf("%s: no second derivative", op.name)
	}
	back := newGELUOp(op.dims, true)
	back.fwd = op
	op.keep = true
	// The backward reads only dy and the kept slope; its first input, the
	// forward's output, orders it after the forward. Ordering by x instead
	// would keep x, a (B, N, 4D) buffer in a ViT's MLP, alive until the
	// backward pass, where nothing else needs it.
	dx, err := gorgonia.ApplyOp(back, output, grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx}, nil
}
