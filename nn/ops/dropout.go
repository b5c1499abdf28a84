package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Dropout is inverted dropout, PyTorch's nn.Dropout(p) in training mode:
// each element of x is kept with probability 1−p and scaled by 1/(1−p), or
// zeroed. x is any shape; the result is shaped like x. The mask comes from r
// (see Randomness); the backward is dy·mask/(1−p). p = 0 returns x itself.
// Eval graphs simply leave Dropout out.
func Dropout(x *gorgonia.Node, p float64, r *Randomness) (*gorgonia.Node, error) {
	return applyMask("Dropout", x, p, r, false)
}

// applyMask builds a maskOp: Dropout, or DropPath when perSample.
func applyMask(name string, x *gorgonia.Node, p float64, r *Randomness, perSample bool) (*gorgonia.Node, error) {
	if !(p >= 0 && p < 1) {
		return nil, fmt.Errorf("%s: drop probability %v is not in [0, 1)", name, p)
	}
	if p == 0 {
		return x, nil
	}
	if r == nil {
		return nil, fmt.Errorf("%s: nil Randomness", name)
	}
	if x.Dims() < 1 || x.Shape().TotalSize() == 0 {
		return nil, fmt.Errorf("%s: x %v needs at least 1 dim and 1 element", name, x.Shape())
	}
	op := &maskOp{id: uniqueID(), dims: x.Dims(), p: p, perSample: perSample, r: r, stream: r.newStream()}
	op.base = base{name: name, arity: 1, params: func(h hash.Hash) { fmt.Fprint(h, op.id, op.p) }}
	return gorgonia.ApplyOp(op, x)
}

// maskOp is y = x·keep/(1−p) with keep drawn per element (dropout) or per
// sample along the first axis (drop path). It owns keep and the step it
// was drawn for; whichever of the forward and backward nodes runs first in
// a step draws it, and both apply the same one.
type maskOp struct {
	base
	id        uint64 // unique: names the op in its own hash and its backward's
	dims      int
	p         float64
	perSample bool
	r         *Randomness
	stream    uint64
	keep      []uint8
	keepStep  uint64
	keepValid bool
}

func (op *maskOp) Type() hm.Type { return fnType(op.dims, op.dims) }

func (op *maskOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *maskOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *maskOp) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.apply(op.name, prealloc, in)
}

// apply multiplies in[0] by the current step's mask: the forward pass on
// x, or the backward pass on dy.
func (op *maskOp) apply(name string, prealloc gorgonia.Value, in []gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes(name, in...)
	if err != nil {
		return nil, err
	}
	s := in[0].Shape()
	n := s.TotalSize()
	group := 1 // elements per keep decision
	if op.perSample {
		group = n / s[0]
	}
	keep := op.keepFor(n / group)
	out := output(prealloc, dt, s)
	scale := 1 / (1 - op.p)
	if dt == tensor.Float32 {
		applyKeep(floats[float32](in[0]), floats[float32](out), keep, group, float32(scale))
	} else {
		applyKeep(floats[float64](in[0]), floats[float64](out), keep, group, scale)
	}
	return out, nil
}

// keepFor returns the n keep decisions of the current step, drawing them
// when the step has changed.
func (op *maskOp) keepFor(n int) []uint8 {
	step := op.r.Step()
	if op.keepValid && op.keepStep == step && len(op.keep) == n {
		return op.keep
	}
	if cap(op.keep) < n {
		op.keep = make([]uint8, n)
	}
	op.keep = op.keep[:n]
	fillKeep(op.keep, op.r.streamKey(op.stream, step), op.p)
	op.keepStep, op.keepValid = step, true
	return op.keep
}

// applyKeep sets y = x·scale where the keep decision of x's group is 1 and
// 0 elsewhere; group consecutive elements share decision keep[i/group].
func applyKeep[T Float](x, y []T, keep []uint8, group int, scale T) {
	parallelRows(len(keep), group, keepGroups[T]{x, y, keep, group, [2]T{0, scale}})
}

// keepGroups is applyKeep over a range of groups.
type keepGroups[T Float] struct {
	x, y   []T
	keep   []uint8
	group  int
	factor [2]T // by keep decision
}

func (k *keepGroups[T]) Range(lo, hi int) {
	if k.group == 1 {
		ys, ks := k.y[lo:hi], k.keep[lo:hi]
		for i, v := range k.x[lo:hi] {
			ys[i] = v * k.factor[ks[i]&1]
		}
		return
	}
	for g := lo; g < hi; g++ {
		f := k.factor[k.keep[g]&1]
		ys := k.y[g*k.group : (g+1)*k.group]
		for i, v := range k.x[g*k.group : (g+1)*k.group] {
			ys[i] = v * f
		}
	}
}

func (op *maskOp) DiffWRT(int) []bool { return []bool{true} }

func (op *maskOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	g := &maskGrad{fwd: op}
	g.base = base{name: op.name + "Grad", arity: 1, params: func(h hash.Hash) { fmt.Fprint(h, op.id) }}
	dx, err := gorgonia.ApplyOp(g, grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx}, nil
}

// maskGrad is dx = dy·keep/(1−p) with the mask of fwd.
type maskGrad struct {
	base
	fwd *maskOp
}

func (op *maskGrad) Type() hm.Type { return fnType(op.fwd.dims, op.fwd.dims) }

func (op *maskGrad) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.fwd.InferShape(in...)
}

func (op *maskGrad) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *maskGrad) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.fwd.apply(op.name, prealloc, in)
}
