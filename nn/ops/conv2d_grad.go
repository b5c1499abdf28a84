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
}

func newConv2dGradInput(xShape tensor.Shape, stride, pad int) *conv2dGradInput {
	op := &conv2dGradInput{xShape: xShape.Clone(), stride: stride, pad: pad}
	op.base = base{name: "Conv2dGradInput", arity: 2, params: func(h hash.Hash) { fmt.Fprint(h, op.xShape, op.stride, op.pad) }}
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
		conv2dBackwardInput(g, floats[float32](in[0]), floats[float32](in[1]), floats[float32](out), op.xShape[0], ws[0])
	} else {
		conv2dBackwardInput(g, floats[float64](in[0]), floats[float64](in[1]), floats[float64](out), op.xShape[0], ws[0])
	}
	return out, nil
}

func conv2dBackwardInput[T Float](g convGeom, dy, w, dx []T, batch, o int) {
	k, n, img := g.colRows(), g.colCols(), g.imageSize()
	g.forGroups(batch, func(s0, m int) {
		ld := m * n
		dys := convGroupOf(dy, s0, m, o, n)
		if m > 1 {
			defer putScratch(dys)
		}
		col := getScratch[T](k * ld)
		defer putScratch(col)
		blas.Gemm(true, false, k, ld, o, 1, w, k, dys, ld, 0, col, ld)
		for j := 0; j < m; j++ {
			col2im(g, col[j*n:], ld, dx[(s0+j)*img:][:img])
		}
	})
}

// conv2dGradWeight computes dW = Σ_s dy_s·im2col(x_s)ᵀ:
// x (B, C, H, W), dy (B, O, H', W') → w's shape (O, C, KH, KW).
type conv2dGradWeight struct {
	base
	wShape      tensor.Shape
	stride, pad int
}

func newConv2dGradWeight(wShape tensor.Shape, stride, pad int) *conv2dGradWeight {
	op := &conv2dGradWeight{wShape: wShape.Clone(), stride: stride, pad: pad}
	op.base = base{name: "Conv2dGradWeight", arity: 2, params: func(h hash.Hash) { fmt.Fprint(h, op.wShape, op.stride, op.pad) }}
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
		conv2dBackwardWeight(g, floats[float32](in[0]), floats[float32](in[1]), floats[float32](out), xs[0], op.wShape[0])
	} else {
		conv2dBackwardWeight(g, floats[float64](in[0]), floats[float64](in[1]), floats[float64](out), xs[0], op.wShape[0])
	}
	return out, nil
}

// conv2dBackwardWeight computes dW: the groups are cut into one fixed,
// contiguous run per core; each run accumulates into its own buffer, and
// the buffers are added into dw in run order, so the result does not
// depend on which worker ran what.
func conv2dBackwardWeight[T Float](g convGeom, x, dy, dw []T, batch, o int) {
	k, n, img := g.colRows(), g.colCols(), g.imageSize()
	size := g.group(batch)
	groups := (batch + size - 1) / size
	runs := parallelWorkers(groups, 1)
	perRun := (groups + runs - 1) / runs
	runs = (groups + perRun - 1) / perRun
	var parts [maxRuns][]T
	if runs > maxRuns {
		runs, perRun = 1, groups
	}
	parallel.For(runs, 1, func(rlo, rhi int) {
		for r := rlo; r < rhi; r++ {
			part := getScratch[T](o * k)
			for gi := r * perRun; gi < min((r+1)*perRun, groups); gi++ {
				s0 := gi * size
				m := min(size, batch-s0)
				ld := m * n
				col := getScratch[T](k * ld)
				for j := 0; j < m; j++ {
					im2col(g, x[(s0+j)*img:][:img], col[j*n:], ld)
				}
				dys := convGroupOf(dy, s0, m, o, n)
				var beta T
				if gi > r*perRun {
					beta = 1
				}
				blas.Gemm(false, true, o, k, ld, 1, dys, ld, col, ld, beta, part, k)
				putScratch(col)
				if m > 1 {
					putScratch(dys)
				}
			}
			parts[r] = part
		}
	})
	copy(dw, parts[0])
	putScratch(parts[0])
	for _, part := range parts[1:runs] {
		for i, v := range part {
			dw[i] += v
		}
		putScratch(part)
	}
}

// maxRuns bounds the per-core partial sums of conv2dBackwardWeight.
const maxRuns = 256

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
	plane := len(x) / (batch * c)
	parallel.For(c, 4, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			var acc float64
			for b := 0; b < batch; b++ {
				for _, v := range x[(b*c+ch)*plane : (b*c+ch+1)*plane] {
					acc += float64(v)
				}
			}
			out[ch] = T(acc)
		}
	})
}
