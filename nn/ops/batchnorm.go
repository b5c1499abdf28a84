package ops

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/parallel"
)

// BatchNorm constants, PyTorch's defaults.
const (
	BatchNormEps      = 1e-5 // added to the variance before the square root
	BatchNormMomentum = 0.1  // weight of the current batch in the running statistics
)

// BatchNormState is a batch-norm layer's buffers, PyTorch's running_mean,
// running_var and num_batches_tracked. A training-mode BatchNorm2d updates
// it on every forward run; an eval-mode one reads it.
type BatchNormState struct {
	RunningMean       []float32 // (C), starts at 0
	RunningVar        []float32 // (C), starts at 1
	NumBatchesTracked int64     // training-mode forward runs so far
}

// NewBatchNormState returns the initial state of a batch norm over c
// channels: running mean 0 and running variance 1.
func NewBatchNormState(c int) *BatchNormState {
	st := &BatchNormState{RunningMean: make([]float32, c), RunningVar: make([]float32, c)}
	for i := range st.RunningVar {
		st.RunningVar[i] = 1
	}
	return st
}

// BatchNorm2d normalises x per channel and applies weight and bias:
// PyTorch's nn.BatchNorm2d (affine, tracking running statistics).
//
// x is (B, C, H, W) (any (B, C, ...) works: the statistics run over every
// axis but C); weight and bias are (C); the result has x's shape.
//
// In training mode each channel is normalised with the mean and biased
// variance of the batch, and the forward run updates st:
// running = (1 − 0.1)·running + 0.1·batch statistic, using the unbiased
// variance for RunningVar. In eval mode the running statistics are used and
// st is left alone. eps is 1e-5.
func BatchNorm2d(x, weight, bias *gorgonia.Node, st *BatchNormState, training bool) (*gorgonia.Node, error) {
	xs := x.Shape()
	if len(xs) < 2 {
		return nil, fmt.Errorf("BatchNorm2d: x %v needs a channel axis", xs)
	}
	c := xs[1]
	for _, p := range []struct {
		name string
		n    *gorgonia.Node
	}{{"weight", weight}, {"bias", bias}} {
		if p.n == nil {
			return nil, fmt.Errorf("BatchNorm2d: %s is nil", p.name)
		}
		if s := p.n.Shape(); len(s) != 1 || s[0] != c {
			return nil, fmt.Errorf("BatchNorm2d: %s %v does not match the %d channels of x %v", p.name, s, c, xs)
		}
	}
	if st == nil || len(st.RunningMean) != c || len(st.RunningVar) != c {
		return nil, fmt.Errorf("BatchNorm2d: state does not hold %d channels", c)
	}
	op := &batchNormOp{dims: len(xs), training: training, st: st, stats: newBNStats(c), id: uniqueID()}
	op.base = base{name: "BatchNorm2d", arity: 3, params: func(h hash.Hash) { fmt.Fprint(h, op.dims, op.training, op.id) }}
	return gorgonia.ApplyOp(op, x, weight, bias)
}

// bnStats is what one BatchNorm2d node's forward run leaves for its
// backward nodes: the per-channel mean and 1/sqrt(var + eps) it normalised
// with (batch statistics in training, running ones in eval), and in
// training the biased batch variance.
type bnStats struct {
	mean, variance, invStd []float64
}

func newBNStats(c int) *bnStats {
	return &bnStats{mean: make([]float64, c), variance: make([]float64, c), invStd: make([]float64, c)}
}

type batchNormOp struct {
	base
	dims     int
	training bool
	st       *BatchNormState
	stats    *bnStats
	id       uint64 // the op updates st, so two nodes are never merged
}

func (op *batchNormOp) Type() hm.Type { return fnType(op.dims, op.dims, 1, 1) }

func (op *batchNormOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapeOf(in, 0)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *batchNormOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, in...)
}

func (op *batchNormOp) UsePreallocDo(prealloc gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes("BatchNorm2d", in...)
	if err != nil {
		return nil, err
	}
	xs := in[0].Shape()
	l := bnLayoutOf(xs)
	if op.training && l.batch*l.plane < 2 {
		return nil, fmt.Errorf("BatchNorm2d: training needs more than one value per channel, x is %v", xs)
	}
	if op.training {
		if dt == tensor.Float32 {
			bnBatchStats(l, floats[float32](in[0]), op.stats)
		} else {
			bnBatchStats(l, floats[float64](in[0]), op.stats)
		}
		op.updateRunning(l)
	} else {
		for ch := range op.stats.mean {
			op.stats.mean[ch] = float64(op.st.RunningMean[ch])
			op.stats.invStd[ch] = 1 / math.Sqrt(float64(op.st.RunningVar[ch])+BatchNormEps)
		}
	}
	out := output(prealloc, dt, xs)
	if dt == tensor.Float32 {
		bnNormalize(l, floats[float32](in[0]), floats[float32](in[1]), floats[float32](in[2]), floats[float32](out), op.stats)
	} else {
		bnNormalize(l, floats[float64](in[0]), floats[float64](in[1]), floats[float64](in[2]), floats[float64](out), op.stats)
	}
	return out, nil
}

// updateRunning folds the batch statistics just computed into st.
func (op *batchNormOp) updateRunning(l bnLayout) {
	n := float64(l.batch * l.plane)
	for ch, mean := range op.stats.mean {
		unbiased := op.stats.variance[ch] * n / (n - 1)
		op.st.RunningMean[ch] = float32((1-BatchNormMomentum)*float64(op.st.RunningMean[ch]) + BatchNormMomentum*mean)
		op.st.RunningVar[ch] = float32((1-BatchNormMomentum)*float64(op.st.RunningVar[ch]) + BatchNormMomentum*unbiased)
	}
	op.st.NumBatchesTracked++
}

// bnLayout views a (B, C, ...) tensor as B blocks of C planes of plane elements.
type bnLayout struct {
	batch, c, plane int
}

func bnLayoutOf(s tensor.Shape) bnLayout {
	l := bnLayout{batch: s[0], c: s[1], plane: 1}
	for _, d := range s[2:] {
		l.plane *= d
	}
	return l
}

// grain is the number of channels worth handing one worker.
func (l bnLayout) grain() int { return max(1, 16384/max(1, l.batch*l.plane)) }

// bnChannel returns the plane of sample b, channel ch.
func bnChannel[T Float](l bnLayout, x []T, b, ch int) []T {
	return x[(b*l.c+ch)*l.plane:][:l.plane]
}

// bnBatchStats computes each channel's mean, biased variance and
// 1/sqrt(variance + eps), two passes in float64.
func bnBatchStats[T Float](l bnLayout, x []T, s *bnStats) {
	parallel.Loop(l.c, l.grain(), bnChannels[T]{pass: bnStatsPass, l: l, s: s, x: x})
}

// bnNormalize writes y = (x − mean)·invStd·w + b per channel.
func bnNormalize[T Float](l bnLayout, x, w, bias, y []T, s *bnStats) {
	parallel.Loop(l.c, l.grain(), bnChannels[T]{pass: bnNormalizePass, l: l, s: s, x: x, w: w, b: bias, out: y})
}

// bnPass names one of batch norm's per-channel loops.
type bnPass int

const (
	bnStatsPass      bnPass = iota // s from x
	bnNormalizePass                // out = (x − mean)·invStd·w + b
	bnGradWeightPass               // out = dw from x, dy
	bnGradInputEval                // out = dx from w, dy
	bnGradInputTrain               // out = dx from x, w, dy, dw and db (in b)
)

// bnChannels runs one pass of batch norm over a range of channels.
type bnChannels[T Float] struct {
	pass            bnPass
	l               bnLayout
	s               *bnStats
	x, w, b, dy, dw []T
	out             []T
}

func (k *bnChannels[T]) Range(lo, hi int) {
	for ch := lo; ch < hi; ch++ {
		switch k.pass {
		case bnStatsPass:
			k.stats(ch)
		case bnNormalizePass:
			k.normalize(ch)
		case bnGradWeightPass:
			k.gradWeight(ch)
		case bnGradInputEval:
			k.gradInputEval(ch)
		case bnGradInputTrain:
			k.gradInputTrain(ch)
		}
	}
}

func (k *bnChannels[T]) stats(ch int) {
	l, n := k.l, float64(k.l.batch*k.l.plane)
	var sum float64
	for b := 0; b < l.batch; b++ {
		for _, v := range bnChannel(l, k.x, b, ch) {
			sum += float64(v)
		}
	}
	mean := sum / n
	var ss float64
	for b := 0; b < l.batch; b++ {
		for _, v := range bnChannel(l, k.x, b, ch) {
			d := float64(v) - mean
			ss += d * d
		}
	}
	k.s.mean[ch] = mean
	k.s.variance[ch] = ss / n
	k.s.invStd[ch] = 1 / math.Sqrt(ss/n+BatchNormEps)
}

func (k *bnChannels[T]) normalize(ch int) {
	scale := float64(k.w[ch]) * k.s.invStd[ch]
	shift := T(float64(k.b[ch]) - k.s.mean[ch]*scale)
	sc := T(scale)
	for b := 0; b < k.l.batch; b++ {
		src, dst := bnChannel(k.l, k.x, b, ch), bnChannel(k.l, k.out, b, ch)
		for i, v := range src {
			dst[i] = v*sc + shift
		}
	}
}

func (op *batchNormOp) DiffWRT(inputs int) []bool { return []bool{true, true, true} }

func (op *batchNormOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	x, w := inputs[0], inputs[1]
	dw, err := gorgonia.ApplyOp(newBatchNormGradWeight(op), x, grad)
	if err != nil {
		return nil, err
	}
	db, err := gorgonia.ApplyOp(newChannelSum(op.dims), grad)
	if err != nil {
		return nil, err
	}
	var dx *gorgonia.Node
	if op.training {
		dx, err = gorgonia.ApplyOp(newBatchNormGradInput(op), x, w, grad, dw, db)
	} else {
		dx, err = gorgonia.ApplyOp(newBatchNormGradInput(op), w, grad)
	}
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx, dw, db}, nil
}
