package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
)

// Conv2d returns the 2-D cross-correlation of x with w plus b: PyTorch's
// nn.Conv2d with dilation 1, one group, and the same stride and zero
// padding on both spatial axes.
//
// x is (B, C, H, W); w is (O, C, KH, KW); b is (O) or nil. The result is
// (B, O, H', W') with H' = (H + 2·pad − KH)/stride + 1, likewise W'.
// Each sample is lowered to a (C·KH·KW, H'·W') column matrix (im2col) and
// multiplied by w viewed as (O, C·KH·KW); samples run in parallel.
func Conv2d(x, w, b *gorgonia.Node, stride, pad int) (*gorgonia.Node, error) {
	return Conv2dAs(blas.FP32, x, w, b, stride, pad)
}

// Conv2dAs is Conv2d with its matrix products (the forward pass and both
// gradients) in v's arithmetic for float32 values (blas.GemmAs).
func Conv2dAs(v blas.Variant, x, w, b *gorgonia.Node, stride, pad int) (*gorgonia.Node, error) {
	if x.Dims() != 4 || w.Dims() != 4 {
		return nil, fmt.Errorf("Conv2d: x %v and w %v must both be 4-D", x.Shape(), w.Shape())
	}
	if _, err := conv2dGeom(x.Shape(), w.Shape(), stride, pad); err != nil {
		return nil, err
	}
	op := &conv2dOp{stride: stride, pad: pad, bias: b != nil, gemm: v}
	op.base = base{name: "Conv2d", arity: 2, params: func(h hash.Hash) { fmt.Fprint(h, op.stride, op.pad, op.bias, variantKey(v)) }}
	if b == nil {
		return gorgonia.ApplyOp(op, x, w)
	}
	if bs := b.Shape(); len(bs) != 1 || bs[0] != w.Shape()[0] {
		return nil, fmt.Errorf("Conv2d: bias %v does not match w %v", bs, w.Shape())
	}
	op.arity = 3
	return gorgonia.ApplyOp(op, x, w, b)
}

// conv2dGeom checks x (B, C, H, W) against w (O, C, KH, KW) and returns the
// per-sample geometry.
func conv2dGeom(xs, ws tensor.Shape, stride, pad int) (convGeom, error) {
	if len(xs) != 4 || len(ws) != 4 {
		return convGeom{}, fmt.Errorf("Conv2d: x %v and w %v must both be 4-D", xs, ws)
	}
	if xs[1] != ws[1] {
		return convGeom{}, fmt.Errorf("Conv2d: x %v has %d channels but w %v takes %d", xs, xs[1], ws, ws[1])
	}
	g, err := newConvGeom(xs[1], xs[2], xs[3], ws[2], ws[3], stride, pad)
	if err != nil {
		return convGeom{}, fmt.Errorf("Conv2d: x %v, w %v: %w", xs, ws, err)
	}
	return g, nil
}

type conv2dOp struct {
	base
	stride, pad int
	bias        bool
	gemm        blas.Variant
}

func (op *conv2dOp) Type() hm.Type {
	if op.bias {
		return fnType(4, 4, 4, 1)
	}
	return fnType(4, 4, 4)
}

func (op *conv2dOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	xs, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	ws, err := shapeOf(in, 1)
	if err != nil {
		return nil, err
	}
	g, err := conv2dGeom(xs, ws, op.stride, op.pad)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{xs[0], ws[0], g.oh, g.ow}, nil
}

func (op *conv2dOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *conv2dOp) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("Conv2d", in...)
	if err != nil {
		return nil, err
	}
	xs, ws := in[0].Shape(), in[1].Shape()
	g, err := conv2dGeom(xs, ws, op.stride, op.pad)
	if err != nil {
		return nil, err
	}
	out := output(prealloc, dt, tensor.Shape{xs[0], ws[0], g.oh, g.ow})
	if dt == tensor.Float32 {
		conv2dForward(op.gemm, g, floats[float32](in[0]), floats[float32](in[1]), biasOf[float32](op.bias, in), floats[float32](out), xs[0], ws[0])
	} else {
		conv2dForward(blas.FP32, g, floats[float64](in[0]), floats[float64](in[1]), biasOf[float64](op.bias, in), floats[float64](out), xs[0], ws[0])
	}
	return out, nil
}

// biasOf returns the bias input's elements, or nil without a bias.
func biasOf[T Float](bias bool, in []gorgonia.Value) []T {
	if !bias {
		return nil
	}
	return floats[T](in[2])
}

// conv2dForward computes y_s = W·im2col(x_s) (+ b) for every sample s,
// several samples per product.
func conv2dForward[T Float](v blas.Variant, g convGeom, x, w, b, y []T, batch, o int) {
	forGroups(g, batch, convGroups[T]{gemm: v, g: g, x: x, w: w, b: b, y: y, o: o})
}

// convGroups holds a convolution's operands, for the per-group products of
// the forward pass (x, w, b → y) and of the input gradient (dy, w → dx).
type convGroups[T Float] struct {
	gemm               blas.Variant
	g                  convGeom
	x, w, b, y, dy, dx []T
	o                  int
}

// group computes y for samples s0…s0+m−1.
func (c *convGroups[T]) group(s0, m int) {
	g, o := c.g, c.o
	k, n, img := g.colRows(), g.colCols(), g.imageSize()
	ld := m * n
	col := getScratch[T](k * ld)
	defer putScratch(col)
	for j := 0; j < m; j++ {
		im2col(g, c.x[(s0+j)*img:][:img], col[j*n:], ld)
	}
	dst := c.y[s0*o*n:][:o*n]
	if m > 1 {
		dst = getScratch[T](o * ld)
		defer putScratch(dst)
	}
	beta := T(0)
	if c.b != nil {
		for i, v := range c.b {
			row := dst[i*ld:][:ld]
			for j := range row {
				row[j] = v
			}
		}
		beta = 1
	}
	blas.GemmAs(c.gemm, false, false, o, ld, k, 1, c.w, k, col, ld, beta, dst, ld, nil)
	if m > 1 {
		scatterGroup(dst, c.y, s0, m, o, n)
	}
}

func (op *conv2dOp) DiffWRT(inputs int) []bool {
	d := make([]bool, inputs)
	for i := range d {
		d[i] = true
	}
	return d
}

func (op *conv2dOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	x, w := inputs[0], inputs[1]
	dx, err := gorgonia.ApplyOp(newConv2dGradInput(x.Shape(), op.stride, op.pad, op.gemm), grad, w)
	if err != nil {
		return nil, err
	}
	dw, err := gorgonia.ApplyOp(newConv2dGradWeight(w.Shape(), op.stride, op.pad, op.gemm), x, grad)
	if err != nil {
		return nil, err
	}
	if !op.bias {
		return gorgonia.Nodes{dx, dw}, nil
	}
	db, err := gorgonia.ApplyOp(newChannelSum(grad.Dims()), grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx, dw, db}, nil
}
