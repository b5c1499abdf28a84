package ops

import (
	"fmt"
	"hash"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/runner"
	"github.com/vit-train/vit-train/nn/vec"
)

// LinearGELUAs returns GELU(x·Wᵀ + b), LinearAs followed by GELU, as one
// op: GELU runs on each strip of the product as the matrix kernel stores
// it, while the strip is in cache (blas.GemmAsThen), so that x·Wᵀ + b is
// never written to memory and read back, nor kept: a ViT's fc1 with its
// activation. Shapes are LinearAs's. Values and gradients are those of
// LinearAs and GELU applied in turn, bit for bit.
func LinearGELUAs(v blas.Variant, x, w, b *gorgonia.Node) (*gorgonia.Node, error) {
	lin, args, err := newLinearOp(v, x, w, b)
	if err != nil {
		return nil, err
	}
	op := &linearGELUOp{linearOp: lin, act: newGELUOp(x.Dims(), false)}
	lin.base = base{name: "LinearGELU", arity: lin.arity, params: func(h hash.Hash) {
		fmt.Fprint(h, lin.xDims, lin.wDims, lin.bias, variantKey(v))
	}}
	op.then = op.activate
	return gorgonia.ApplyOp(op, args...)
}

// linearGELUOp is LinearGELUAs's op: linearOp's product (and its weight
// freezing) with act's GELU applied to the product's blocks in place. act
// is never applied itself; it holds the slope GELU'(x·Wᵀ + b) that its
// backward op reads.
type linearGELUOp struct {
	*linearOp
	act  *geluOp
	then blas.Then // activate, bound once
	// The output converted by activate, block by block, for the linear
	// layer that reads it (an MLP's fc2).
	outputConversion

	// Per-run values read by activate.
	y, slope []float32
	n        int
	conv     *blas.ConvertedA
}

func (op *linearGELUOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *linearGELUOp) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, out, b, m, n, k, err := op.operands(prealloc, in)
	if err != nil {
		return nil, err
	}
	act := op.act
	if dt == tensor.Float32 {
		op.y, op.slope, op.n = floats[float32](out), nil, n
		if act.keep {
			act.slope32 = grow(act.slope32, m*n)
			op.slope = act.slope32
		}
		op.conv = op.converted.start(m, n)
		linearForward[float32](op.linearOp, in[0], in[1], b, out, m, n, k, op.then)
		op.converted.finish(op.conv, op.y)
		op.y, op.slope, op.conv = nil, nil, nil
		return out, nil
	}
	linearForward[float64](op.linearOp, in[0], in[1], b, out, m, n, k, nil)
	y := floats[float64](out)
	if act.keep {
		act.slope64 = grow(act.slope64, m*n)
		geluDo(y, y, act.slope64[:m*n])
	} else {
		geluDo(y, y, nil)
	}
	return out, nil
}

// activate applies GELU in place to y[i0:i1, j0:j1], keeping its slope
// when the backward needs it (written with streaming stores: the
// backward reads it after the rest of the forward pass), and converts the
// block for the layer that reads y when there is one.
func (op *linearGELUOp) activate(i0, i1, j0, j1 int) {
	for i := i0; i < i1; i++ {
		row := op.y[i*op.n+j0 : i*op.n+j1]
		if op.slope != nil {
			vec.GELUAndDerivStreaming(row, op.slope[i*op.n+j0:i*op.n+j1], row)
		} else {
			vec.GELU(row, row)
		}
	}
	if op.slope != nil {
		vec.StoreFence()
	}
	if op.conv != nil {
		op.conv.Convert(op.y, op.n, i0, i1, j0, j1)
	}
}

// SymDiff is GELU's backward, dh = dy·GELU'(h), then Linear's from dh.
func (op *linearGELUOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	op.act.keep = true
	dh, err := op.activationGrad(output, grad)
	if err != nil {
		return nil, err
	}
	return op.linearOp.SymDiff(inputs, output, dh)
}

// activationGrad returns dh = grad·GELU'(h) for the op's output h. Where
// grad is the input gradient dy·W of a linear layer that reads h
// directly (an MLP's fc2), it is one op that scales dy·W by the slope as
// the matrix kernel stores it, in place of grad's: dy·W is never written
// to memory and read back.
func (op *linearGELUOp) activationGrad(output, grad *gorgonia.Node) (*gorgonia.Node, error) {
	if next, ok := grad.Op().(*linearGradInput); ok {
		fused := &linearGradInputGELU{linearGradInput: *next, act: op.act}
		fused.base.name = "LinearGradInputGELU"
		fused.then = fused.scale
		return gorgonia.ApplyOp(fused, runner.Inputs(grad.Graph(), grad)...)
	}
	back := newGELUOp(output.Dims(), true)
	back.fwd = op.act
	return gorgonia.ApplyOp(back, output, grad)
}

// linearGradInputGELU is linearGradInput, dy·W, times GELU'(h), the slope
// act kept in the forward pass: the gradient reaching x·Wᵀ + b of a
// LinearGELU whose output h feeds the linear layer of dy and W. Values
// are those of linearGradInput and GELU's backward in turn, bit for bit.
type linearGradInputGELU struct {
	linearGradInput
	act  *geluOp
	then blas.Then // scale, bound once

	// Per-run values read by scale.
	y, slope []float32
	n        int
}

func (op *linearGradInputGELU) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *linearGradInputGELU) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes(op.name, in...)
	if err != nil {
		return nil, err
	}
	out := output(prealloc, dt, op.xShape)
	size := op.xShape.TotalSize()
	if dt == tensor.Float32 {
		op.y, op.slope, op.n = floats[float32](out), op.act.slope32[:size], op.rowLen()
		op.product(dt, in[0], in[1], out, op.then)
		op.y, op.slope = nil, nil
		return out, nil
	}
	op.product(dt, in[0], in[1], out, nil)
	y := floats[float64](out)
	scaleBy(y, op.act.slope64[:size], y)
	return out, nil
}

// scale multiplies y[i0:i1, j0:j1] by the slope there, in GELU's
// backward's operand order.
func (op *linearGradInputGELU) scale(i0, i1, j0, j1 int) {
	for i := i0; i < i1; i++ {
		row := op.y[i*op.n+j0 : i*op.n+j1]
		vec.Mul(row, row, op.slope[i*op.n+j0:i*op.n+j1])
	}
}
