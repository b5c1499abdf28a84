package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GELU returns x·Φ(x) elementwise, Φ the standard normal CDF: the exact (erf)
// GELU of PyTorch's nn.GELU() and timm. x is any shape; the result is shaped
// like x. float64 uses math.Erfc; float32 uses FastExp32 and the
// Abramowitz–Stegun erfc (|ΔΦ| < 1e-6). The backward is dy·(Φ(x) + x·φ(x)).
func GELU(x *gorgonia.Node) (*gorgonia.Node, error) {
	if x.Dims() < 1 {
		return nil, fmt.Errorf("GELU: x %v needs at least 1 dim", x.Shape())
	}
	return gorgonia.ApplyOp(newGELUOp(x.Dims(), false), x)
}

// geluOp is y = GELU(x), or with grad its backward dx = dy·GELU'(x) taking (x, dy).
type geluOp struct {
	base
	dims int
	grad bool
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
	if dt == tensor.Float32 {
		geluDo[float32](op.grad, in, out)
	} else {
		geluDo[float64](op.grad, in, out)
	}
	return out, nil
}

func geluDo[T Float](grad bool, in []gorgonia.Value, out *tensor.Dense) {
	x, y := floats[T](in[0]), floats[T](out)
	var dy []T
	if grad {
		dy = floats[T](in[1])
	}
	parallelFor(len(x), rowsWorkGrain, func(lo, hi int) {
		if grad {
			geluBackward(x[lo:hi], dy[lo:hi], y[lo:hi])
		} else {
			geluForward(x[lo:hi], y[lo:hi])
		}
	})
}

// geluChunk is the float32 work unit: small enough for its scratch to stay
// on the stack and in L1.
const geluChunk = 256

// geluForward sets y = x·Φ(x).
func geluForward[T Float](x, y []T) {
	switch xs := any(x).(type) {
	case []float32:
		ys := any(y).([]float32)[:len(xs)]
		var e [geluChunk]float32
		for lo := 0; lo < len(xs); lo += geluChunk {
			xc, yc := xs[lo:min(lo+geluChunk, len(xs))], ys[lo:min(lo+geluChunk, len(xs))]
			normal32(xc, yc, e[:])
			for i, v := range xc {
				yc[i] *= v
			}
		}
	case []float64:
		ys := any(y).([]float64)[:len(xs)]
		for i, v := range xs {
			c, _ := normal64(v)
			ys[i] = v * c
		}
	}
}

// geluBackward sets dx = dy·(Φ(x) + x·φ(x)); dx may be dy itself.
func geluBackward[T Float](x, dy, dx []T) {
	switch xs := any(x).(type) {
	case []float32:
		gs, ds := any(dy).([]float32)[:len(xs)], any(dx).([]float32)[:len(xs)]
		var cdf, e [geluChunk]float32
		for lo := 0; lo < len(xs); lo += geluChunk {
			hi := min(lo+geluChunk, len(xs))
			xc, gc, dc := xs[lo:hi], gs[lo:hi], ds[lo:hi]
			normal32(xc, cdf[:], e[:])
			for i, v := range xc {
				dc[i] = gc[i] * (cdf[i] + v*e[i]*invSqrt2Pi)
			}
		}
	case []float64:
		gs, ds := any(dy).([]float64)[:len(xs)], any(dx).([]float64)[:len(xs)]
		for i, v := range xs {
			c, p := normal64(v)
			ds[i] = gs[i] * (c + v*p)
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
	dx, err := gorgonia.ApplyOp(newGELUOp(op.dims, true), inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx}, nil
}
