// Package ops holds vit-train's fused Gorgonia ops. Each op has its own
// forward and backward (gorgonia.Op + gorgonia.SDOp; the backward is a
// further op node), works on float32 and float64, writes into buffers given
// to it (gorgonia.UsePreallocDoer) and spreads its rows over all cores.
//
// Gorgonia's SoftMax, LogSoftMax, Dropout, InverseSqrt and AdamW are not used
// anywhere in vit-train: see the package tests for the finite-difference
// checks every op here passes.
package ops

import (
	"fmt"
	"hash"
	"hash/fnv"
	"sync/atomic"
	"unsafe"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Float is the element type of every fused op's kernels.
type Float interface{ float32 | float64 }

// base supplies the gorgonia.Op methods that all fused ops share. name is
// what String returns and, with the op's parameters written by params, what
// the graph hashes: two nodes with the same op hash and the same children are
// merged by Gorgonia, so ops that must stay distinct (random masks) include a
// unique id in params.
type base struct {
	name   string
	arity  int
	params func(h hash.Hash)
}

func (b base) Arity() int           { return b.arity }
func (b base) ReturnsPtr() bool     { return false }
func (b base) CallsExtern() bool    { return false }
func (b base) OverwritesInput() int { return -1 }
func (b base) String() string       { return b.name }

func (b base) WriteHash(h hash.Hash) {
	fmt.Fprint(h, b.name)
	if b.params != nil {
		b.params(h)
	}
}

func (b base) Hashcode() uint32 {
	h := fnv.New32a()
	b.WriteHash(h)
	return h.Sum32()
}

var uniqueIDs atomic.Uint64

// uniqueID returns a process-wide unique number for ops that must never be merged.
func uniqueID() uint64 { return uniqueIDs.Add(1) }

// fnType is the type of an op taking tensors of the given ranks of one dtype
// and returning a tensor of rank out (a scalar when out is 0).
func fnType(out int, in ...int) hm.Type {
	a := hm.TypeVariable('a')
	ts := make([]hm.Type, 0, len(in)+1)
	for _, d := range in {
		ts = append(ts, tensorOrScalar(d, a))
	}
	ts = append(ts, tensorOrScalar(out, a))
	return hm.NewFnType(ts...)
}

func tensorOrScalar(dims int, a hm.Type) hm.Type {
	if dims == 0 {
		return a
	}
	return gorgonia.TensorType{Dims: dims, Of: a}
}

// shapeOf returns the i-th input shape given to InferShape.
func shapeOf(in []gorgonia.DimSizer, i int) (tensor.Shape, error) {
	if i >= len(in) {
		return nil, fmt.Errorf("missing input %d", i)
	}
	s, ok := in[i].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("input %d: expected a tensor.Shape, got %T", i, in[i])
	}
	return s, nil
}

// floats returns the backing slice of a dense tensor value. For
// *tensor.Dense it reads the typed slice directly: Dense.Data goes through
// reflection and allocates on every call.
func floats[T Float](v gorgonia.Value) []T {
	if d, ok := v.(*tensor.Dense); ok {
		var zero T
		switch any(zero).(type) {
		case float32:
			if d.Dtype() == tensor.Float32 {
				s := d.Float32s()
				return *(*[]T)(unsafe.Pointer(&s))
			}
		case float64:
			if d.Dtype() == tensor.Float64 {
				s := d.Float64s()
				return *(*[]T)(unsafe.Pointer(&s))
			}
		}
	}
	return v.Data().([]T)
}

// floatsOrNil is floats(v), or nil where v is nil.
func floatsOrNil[T Float](v gorgonia.Value) []T {
	if v == nil {
		return nil
	}
	return floats[T](v)
}

// output returns prealloc when it has the wanted shape and dtype, or a new
// zeroed tensor otherwise. It keeps a copy of shape, never shape itself,
// so that a caller's shape literal stays on its stack.
func output(prealloc gorgonia.Value, dt tensor.Dtype, shape tensor.Shape) *tensor.Dense {
	if d, ok := prealloc.(*tensor.Dense); ok && d.Dtype() == dt && d.Shape().TotalSize() == shape.TotalSize() {
		if !d.Shape().Eq(shape) {
			_ = d.Reshape(shape.Clone()...)
		}
		return d
	}
	return tensor.New(tensor.Of(dt), tensor.WithShape(shape.Clone()...))
}

// reuse returns prealloc when it is a dense tensor of dtype dt with size
// elements (as the runner plans it), or nil; callers then build the output
// with output. It spares computing the output shape, an allocation, on
// every run.
func reuse(prealloc gorgonia.Value, dt tensor.Dtype, size int) *tensor.Dense {
	if d, ok := prealloc.(*tensor.Dense); ok && d.Dtype() == dt && d.Shape().TotalSize() == size {
		return d
	}
	return nil
}

// scalarOut is the value of an op whose output is a scalar, held by the
// op and set again on every run, so that a run allocates nothing. A value
// read from a run is overwritten by the next: callers keep the float.
type scalarOut struct {
	f32 gorgonia.F32
	f64 gorgonia.F64
}

// set stores x as the gorgonia scalar of dtype dt and returns it.
func (o *scalarOut) set(dt tensor.Dtype, x float64) gorgonia.Value {
	if dt == tensor.Float32 {
		o.f32 = gorgonia.F32(x)
		return &o.f32
	}
	o.f64 = gorgonia.F64(x)
	return &o.f64
}

// scalarOf reads a float from a gorgonia scalar or a one-element tensor.
func scalarOf(v gorgonia.Value) float64 {
	switch s := v.(type) {
	case *gorgonia.F32:
		return float64(*s)
	case *gorgonia.F64:
		return float64(*s)
	}
	switch d := v.Data().(type) {
	case []float32:
		return float64(d[0])
	case []float64:
		return d[0]
	case float32:
		return float64(d)
	case float64:
		return d
	}
	panic(fmt.Sprintf("ops: not a scalar: %T", v))
}

// checkDtypes returns an error unless every value has the dtype of the first.
func checkDtypes(op string, vs ...gorgonia.Value) (tensor.Dtype, error) {
	dt := vs[0].Dtype()
	if dt != tensor.Float32 && dt != tensor.Float64 {
		return dt, fmt.Errorf("%s: unsupported dtype %v", op, dt)
	}
	for i, v := range vs[1:] {
		if v.Dtype() != dt {
			return dt, fmt.Errorf("%s: input %d has dtype %v, want %v", op, i+1, v.Dtype(), dt)
		}
	}
	return dt, nil
}
