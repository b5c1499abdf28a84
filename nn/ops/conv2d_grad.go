package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/parallel"
)

// conv2dGradInput computes dx = col2im(Wᵀ·dy_s) for every sample:
// dy (B, O, H', W'), w (O, C, KH, KW) → x's shape (B, C, H, W).
type conv2dGradInput struct {
	base
	xShape      tensor.Shape
	stride, pad int
	gemm        blas.Variant
}

func newConv2dGradInput(xShape tensor.Shape, stride, pad int, v blas.Variant) *conv2dGradInput {
	op := &conv2dGradInput{xShape: xShape.Clone(), stride: stride, pad: pad, gemm: v}
	op.base = base{name: "Conv2dGradInput", arity: 2, params: func(h hash.Hash) { fmt.Fprint(h, op.xShape, op.stride, op.pad, variantKey(v)) }}
	return op
}

func (op *conv2dGradInput) Type() hm.Type { return fnType(4, 4, 4) }

func (op *conv2dGradInput) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.xShape.Clone(), nil
}

func (op *conv2dGradInput) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *conv2dGradInput) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("Conv2dGradInput", in...)
	if err != nil {
		return nil, err
	}
	ws := in[1].Shape()
	g, err := conv2dGeom(op.xShape, ws, op.stride, op.pad)
	if err != nil {
		return nil, err
	}
	out := output(prealloc, dt, op.xShape)
	if dt == tensor.Float32 {
		conv2dBackwardInput(op.gemm, g, floats[float32](in[0]), floats[float32](in[1]), floats[float32](out), op.xShape[0], ws[0])
	} else {
		conv2dBackwardInput(blas.FP32, g, floats[float64](in[0]), floats[float64](in[1]), floats[float64](out), op.xShape[0], ws[0])
	}
	return out, nil
}

func conv2dBackwardInput[T Float](v blas.Variant, g convGeom, dy, w, dx []T, batch, o int) {
	forGroups(g, batch, convInputGradGroups[T]{gemm: v, g: g, dy: dy, w: w, dx: dx, o: o})
}

// convInputGradGroups is the input gradient's per-group product.
type convInputGradGroups[T Float] convGroups[T]

// group computes dx for samples s0…s0+m−1.
func (c *convInputGradGroups[T]) group(s0, m int) {
	g, o := c.g, c.o
	k, n, img := g.colRows(), g.colCols(), g.imageSize()
	ld := m * n
	dys := convGroupOf(c.dy, s0, m, o, n)
	if m > 1 {
		defer putScratch(dys)
	}
	col := getScratch[T](k * ld)
	defer putScratch(col)
	blas.GemmAs(c.gemm, true, false, k, ld, o, 1, c.w, k, dys, ld, 0, col, ld, nil)
	for j := 0; j < m; j++ {
		col2im(g, col[j*n:], ld, c.dx[(s0+j)*img:][:img])
	}
}

// conv2dGradWeight computes dW = Σ_s dy_s·im2col(x_s)ᵀ:
// x (B, C, H, W), dy (B, O, H', W') → w's shape (O, C, KH, KW).
type conv2dGradWeight struct {
	base
	wShape      tensor.Shape
	stride, pad int
	gemm        blas.Variant
}

func newConv2dGradWeight(wShape tensor.Shape, stride, pad int, v blas.Variant) *conv2dGradWeight {
	op := &conv2dGradWeight{wShape: wShape.Clone(), stride: stride, pad: pad, gemm: v}
	op.base = base{name: "Conv2dGradWeight", arity: 2, params: func(h hash.Hash) { fmt.Fprint(h, op.wShape, op.stride, op.pad, variantKey(v)) }}
	return op
}

func (op *conv2dGradWeight) Type() hm.Type { return fnType(4, 4, 4) }

func (op *conv2dGradWeight) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.wShape.Clone(), nil
}

func (op *conv2dGradWeight) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *conv2dGradWeight) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("Conv2dGradWeight", in...)
	if err != nil {
		return nil, err
	}
	xs := in[0].Shape()
	g, err := conv2dGeom(xs, op.wShape, op.stride, op.pad)
	if err != nil {
		return nil, err
	}
	out := output(prealloc, dt, op.wShape)
	if dt == tensor.Float32 {
		conv2dBackwardWeight(op.gemm, g, floats[float32](in[0]), floats[float32](in[1]), floats[float32](out), xs[0], op.wShape[0])
	} else {
		conv2dBackwardWeight(blas.FP32, g, floats[float64](in[0]), floats[float64](in[1]), floats[float64](out), xs[0], op.wShape[0])
	}
	return out, nil
}

// conv2dBackwardWeight computes dW: the groups are cut into one fixed,
// contiguous run per core; each run accumulates into its own buffer, and
// the buffers are added into dw in run order, so the result does not
// depend on which worker ran what.
func conv2dBackwardWeight[T Float](v blas.Variant, g convGeom, x, dy, dw []T, batch, o int) {
	size := g.group(batch)
	groups := (batch + size - 1) / size
	runs := parallelWorkers(groups, 1)
	perRun := (groups + runs - 1) / runs
	runs = (groups + perRun - 1) / perRun
	parts := getScratch[T](runs * len(dw))
	defer putScratch(parts)
	parallel.Loop(runs, 1, convWeightGradRuns[T]{gemm: v, g: g, x: x, dy: dy, parts: parts, o: o, batch: batch, size: size, perRun: perRun})
	copy(dw, parts[:len(dw)])
	for r := 1; r < runs; r++ {
		for i, v := range parts[r*len(dw) : (r+1)*len(dw)] {
			dw[i] += v
		}
	}
}

// convWeightGradRuns sums the weight gradient of the groups of each run r
// (perRun groups of size samples) into parts[r·O·K : (r+1)·O·K].
type convWeightGradRuns[T Float] struct {
	gemm                   blas.Variant
	g                      convGeom
	x, dy, parts           []T
	o, batch, size, perRun int
}

func (c *convWeightGradRuns[T]) Range(rlo, rhi int) {
	g, o := c.g, c.o
	k, n, img := g.colRows(), g.colCols(), g.imageSize()
	groups := (c.batch + c.size - 1) / c.size
	for r := rlo; r < rhi; r++ {
		part := c.parts[r*o*k : (r+1)*o*k]
		for gi := r * c.perRun; gi < min((r+1)*c.perRun, groups); gi++ {
			s0 := gi * c.size
			m := min(c.size, c.batch-s0)
			ld := m * n
			col := getScratch[T](k * ld)
			for j := 0; j < m; j++ {
				im2col(g, c.x[(s0+j)*img:][:img], col[j*n:], ld)
			}
			dys := convGroupOf(c.dy, s0, m, o, n)
			var beta T
			if gi > r*c.perRun {
				beta = 1
			}
			blas.GemmAs(c.gemm, false, true, o, k, ld, 1, dys, ld, col, ld, beta, part, k, nil)
			putScratch(col)
			if m > 1 {
				putScratch(dys)
			}
		}
	}
}

// channelSum sums a (B, C, ...) tensor over every axis but the channel
// axis → (C): the gradient of a per-channel bias or shift.
type channelSum struct {
	base
	inDims int
}

func newChannelSum(inDims int) *channelSum {
	op := &channelSum{inDims: inDims}
	op.base = base{name: "ChannelSum", arity: 1, params: func(h hash.Hash) { fmt.Fprint(h, op.inDims) }}
	return op
}

func (op *channelSum) Type() hm.Type { return fnType(1, op.inDims) }

func (op *channelSum) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	if len(s) < 2 {
		return nil, fmt.Errorf("ChannelSum: input %v has no channel axis", s)
	}
	return tensor.Shape{s[1]}, nil
}

func (op *channelSum) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *channelSum) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("ChannelSum", in...)
	if err != nil {
		return nil, err
	}
	s := in[0].Shape()
	c := s[1]
	out := output(prealloc, dt, tensor.Shape{c})
	if dt == tensor.Float32 {
		channelSumKernel(floats[float32](in[0]), floats[float32](out), s[0], c)
	} else {
		channelSumKernel(floats[float64](in[0]), floats[float64](out), s[0], c)
	}
	return out, nil
}

// channelSumKernel sums x (B, C, S) over B and S into out (C), accumulating
// in float64.
func channelSumKernel[T Float](x, out []T, batch, c int) {
	if batch*c == 0 {
		clear(out)
		return
	}
	parallel.Loop(c, 4, channelSums[T]{x, out, batch})
}

// channelSums is channelSumKernel over a range of channels.
type channelSums[T Float] struct {
	x, out []T
	batch  int
}

func (k *channelSums[T]) Range(lo, hi int) {
	c := len(k.out)
	plane := len(k.x) / (k.batch * c)
	for ch := lo; ch < hi; ch++ {
		var acc float64
		for b := 0; b < k.batch; b++ {
			for _, v := range k.x[(b*c+ch)*plane : (b*c+ch+1)*plane] {
				acc += float64(v)
			}
		}
		k.out[ch] = T(acc)
	}
}
