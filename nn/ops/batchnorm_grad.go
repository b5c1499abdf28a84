package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/parallel"
)

// batchNormGradWeight computes dw = Σ dy·x̂ per channel, with
// x̂ = (x − mean)·invStd from the forward run: x, dy (B, C, ...) → (C).
type batchNormGradWeight struct {
	base
	fwd *batchNormOp
}

func newBatchNormGradWeight(fwd *batchNormOp) *batchNormGradWeight {
	op := &batchNormGradWeight{fwd: fwd}
	op.base = base{name: "BatchNorm2dGradWeight", arity: 2, params: func(h hash.Hash) { fmt.Fprint(h, fwd.id) }}
	return op
}

func (op *batchNormGradWeight) Type() hm.Type { return fnType(1, op.fwd.dims, op.fwd.dims) }

func (op *batchNormGradWeight) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[1]}, nil
}

func (op *batchNormGradWeight) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *batchNormGradWeight) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("BatchNorm2dGradWeight", in...)
	if err != nil {
		return nil, err
	}
	l := bnLayoutOf(in[0].Shape())
	out := output(prealloc, dt, tensor.Shape{l.c})
	if dt == tensor.Float32 {
		bnGradWeight(l, floats[float32](in[0]), floats[float32](in[1]), floats[float32](out), op.fwd.stats)
	} else {
		bnGradWeight(l, floats[float64](in[0]), floats[float64](in[1]), floats[float64](out), op.fwd.stats)
	}
	return out, nil
}

func bnGradWeight[T Float](l bnLayout, x, dy, dw []T, s *bnStats) {
	parallel.Loop(l.c, l.grain(), bnChannels[T]{pass: bnGradWeightPass, l: l, s: s, x: x, dy: dy, out: dw})
}

// gradWeight sets out[ch] = Σ dy·x̂ over the channel.
func (k *bnChannels[T]) gradWeight(ch int) {
	mean := k.s.mean[ch]
	var acc float64
	for b := 0; b < k.l.batch; b++ {
		g := bnChannel(k.l, k.dy, b, ch)
		for i, v := range bnChannel(k.l, k.x, b, ch) {
			acc += float64(g[i]) * (float64(v) - mean)
		}
	}
	k.out[ch] = T(acc * k.s.invStd[ch])
}

// batchNormGradInput computes dx. In training mode, from x, w, dy and the
// parameter gradients dw = Σ dy·x̂ and db = Σ dy over the n values of each
// channel: dx = w·invStd·(dy − db/n − x̂·dw/n), the batch statistics'
// own dependence on x included. In eval mode, from w and dy:
// dx = dy·w·invStd.
type batchNormGradInput struct {
	base
	fwd *batchNormOp
}

func newBatchNormGradInput(fwd *batchNormOp) *batchNormGradInput {
	op := &batchNormGradInput{fwd: fwd}
	arity := 2
	if fwd.training {
		arity = 5
	}
	op.base = base{name: "BatchNorm2dGradInput", arity: arity, params: func(h hash.Hash) { fmt.Fprint(h, fwd.id) }}
	return op
}

func (op *batchNormGradInput) Type() hm.Type {
	d := op.fwd.dims
	if op.fwd.training {
		return fnType(d, d, 1, d, 1, 1)
	}
	return fnType(d, 1, d)
}

// dyIndex is the position of dy among the inputs.
func (op *batchNormGradInput) dyIndex() int {
	if op.fwd.training {
		return 2
	}
	return 1
}

func (op *batchNormGradInput) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, op.dyIndex())
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *batchNormGradInput) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *batchNormGradInput) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("BatchNorm2dGradInput", in...)
	if err != nil {
		return nil, err
	}
	ys := in[op.dyIndex()].Shape()
	l := bnLayoutOf(ys)
	out := output(prealloc, dt, ys)
	if dt == tensor.Float32 {
		bnGradInput[float32](l, in, floats[float32](out), op.fwd.stats, op.fwd.training)
	} else {
		bnGradInput[float64](l, in, floats[float64](out), op.fwd.stats, op.fwd.training)
	}
	return out, nil
}

func bnGradInput[T Float](l bnLayout, in []gorgonia.Value, dx []T, s *bnStats, training bool) {
	if !training {
		parallel.Loop(l.c, l.grain(), bnChannels[T]{pass: bnGradInputEval, l: l, s: s, w: floats[T](in[0]), dy: floats[T](in[1]), out: dx})
		return
	}
	parallel.Loop(l.c, l.grain(), bnChannels[T]{pass: bnGradInputTrain, l: l, s: s,
		x: floats[T](in[0]), w: floats[T](in[1]), dy: floats[T](in[2]), dw: floats[T](in[3]), b: floats[T](in[4]), out: dx})
}

// gradInputEval sets dx = dy·w·invStd over the channel.
func (k *bnChannels[T]) gradInputEval(ch int) {
	scale := T(float64(k.w[ch]) * k.s.invStd[ch])
	for b := 0; b < k.l.batch; b++ {
		g, d := bnChannel(k.l, k.dy, b, ch), bnChannel(k.l, k.out, b, ch)
		for i, v := range g {
			d[i] = v * scale
		}
	}
}

// gradInputTrain sets dx = w·invStd·(dy − db/n − x̂·dw/n) over the
// channel, db being in k.b.
func (k *bnChannels[T]) gradInputTrain(ch int) {
	n := float64(k.l.batch * k.l.plane)
	is := k.s.invStd[ch]
	scale := float64(k.w[ch]) * is
	// dx = scale·(dy − db/n − (x − mean)·is·dw/n) = a·dy + bx·(x − mean) + c.
	a := T(scale)
	bx := T(-scale * is * float64(k.dw[ch]) / n)
	c := T(-scale * float64(k.b[ch]) / n)
	mean := T(k.s.mean[ch])
	for b := 0; b < k.l.batch; b++ {
		xs, g, d := bnChannel(k.l, k.x, b, ch), bnChannel(k.l, k.dy, b, ch), bnChannel(k.l, k.out, b, ch)
		for i, v := range xs {
			d[i] = a*g[i] + bx*(v-mean) + c
		}
	}
}
