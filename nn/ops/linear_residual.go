package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/vec"
)

// LinearResidualAs returns r + (x·Wᵀ + b), LinearAs followed by Add, as
// one op: r is added to each block of the product as the matrix kernel
// stores it, while the block is in cache (blas.GemmAsThen), so that
// x·Wᵀ + b is never written to memory and read back, nor kept: a ViT
// block's attention projection or fc2 with its residual connection. x, w
// and b are LinearAs's; r has the result's shape (..., N). Values and
// gradients are those of LinearAs and Add(r, ·) applied in turn, bit for
// bit; r's gradient is the incoming one, as Add's.
func LinearResidualAs(v blas.Variant, x, w, b, r *gorgonia.Node) (*gorgonia.Node, error) {
	lin, args, err := newLinearOp(v, x, w, b)
	if err != nil {
		return nil, err
	}
	want := x.Shape().Clone()
	want[len(want)-1] = lin.wRows
	if !r.Shape().Eq(want) {
		return nil, fmt.Errorf("LinearResidual: residual %v does not match the product %v", r.Shape(), want)
	}
	op := &linearResidualOp{linearOp: lin}
	lin.base = base{name: "LinearResidual", arity: lin.arity + 1, params: func(h hash.Hash) {
		fmt.Fprint(h, lin.xDims, lin.wDims, lin.bias, variantKey(v))
	}}
	op.then = op.addResidual
	return gorgonia.ApplyOp(op, append(args, r)...)
}

// linearResidualOp is LinearResidualAs's op: linearOp's product (and its
// weight packing) with the residual, its last argument, added to the
// product's blocks in place.
type linearResidualOp struct {
	*linearOp
	then blas.Then // addResidual, bound once

	// Per-run values read by addResidual.
	y, r []float32
	n    int
}

// Type is Linear's with the residual, of the result's dims, last.
func (op *linearResidualOp) Type() hm.Type {
	if op.bias {
		return fnType(op.xDims, op.xDims, op.wDims, 1, op.xDims)
	}
	return fnType(op.xDims, op.xDims, op.wDims, op.xDims)
}

func (op *linearResidualOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *linearResidualOp) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	last := len(in) - 1
	dt, out, b, m, n, k, err := op.operands(prealloc, in[:last])
	if err != nil {
		return nil, err
	}
	if r := in[last]; r.Dtype() != dt || r.Shape().TotalSize() != m*n {
		return nil, fmt.Errorf("LinearResidual: residual %v %v does not match the product (%d, %d) %v", r.Shape(), r.Dtype(), m, n, dt)
	}
	if dt == tensor.Float32 {
		op.y, op.r, op.n = floats[float32](out), floats[float32](in[last]), n
		linearForward[float32](op.linearOp, in[0], in[1], b, out, m, n, k, op.then)
		op.y, op.r = nil, nil
		return out, nil
	}
	linearForward[float64](op.linearOp, in[0], in[1], b, out, m, n, k, nil)
	addKernel(floats[float64](in[last]), floats[float64](out), floats[float64](out))
	return out, nil
}

// addResidual sets y[i0:i1, j0:j1] = r + y there, in Add's operand order.
func (op *linearResidualOp) addResidual(i0, i1, j0, j1 int) {
	for i := i0; i < i1; i++ {
		row := op.y[i*op.n+j0 : i*op.n+j1]
		vec.Add(row, op.r[i*op.n+j0:i*op.n+j1], row)
	}
}

// SymDiff is Linear's backward for x, w and b, and the incoming gradient
// itself for the residual.
func (op *linearResidualOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	last := len(inputs) - 1
	grads, err := op.linearOp.SymDiff(inputs[:last], output, grad)
	if err != nil {
		return nil, err
	}
	return append(grads, grad), nil
}
