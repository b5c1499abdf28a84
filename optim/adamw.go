package optim

import (
	"fmt"
	"math"
	"slices"

	"github.com/vit-train/vit-train/nn/vec"
)

// AdamWConfig holds AdamW's hyperparameters. WeightDecay applies when the
// optimizer is built without groups; otherwise each Group's value is used.
type AdamWConfig struct {
	Beta1, Beta2 float64
	Eps          float64
	WeightDecay  float64
}

// AdamW is Adam with decoupled weight decay, exactly torch.optim.AdamW
// (amsgrad off). For step t ≥ 1 and per-parameter learning rate
// η = lr×LRScale and weight decay λ:
//
//	p ← p − η·λ·p
//	m ← β1·m + (1−β1)·g
//	v ← β2·v + (1−β2)·g²
//	p ← p − η/(1−β1^t) · m / (√v/√(1−β2^t) + eps)
type AdamW struct {
	cfg    AdamWConfig
	params []Param
	hp     []hyper
	m, v   [][]float32
	step   int

	// Per-step values read by the work units.
	grads      [][]float32
	coef       []adamCoef
	invSqrtBC2 float32
	gradScale  float32
	sh         sharded

	// rowLen and updated are ReportRows's.
	rowLen  []int
	updated func(param, r0, r1 int)
}

// adamCoef are the per-parameter constants of one step.
type adamCoef struct {
	decayMul float32 // 1 − η·λ
	stepSize float32 // η / (1 − β1^t)
}

// NewAdamW builds an AdamW optimizer over params (whose Data it updates in
// place) with the given groups (nil: one group with cfg.WeightDecay). The
// moment buffers are allocated here, zeroed.
func NewAdamW(params []Param, groups []Group, cfg AdamWConfig) (*AdamW, error) {
	if !(cfg.Beta1 >= 0 && cfg.Beta1 < 1) || !(cfg.Beta2 >= 0 && cfg.Beta2 < 1) {
		return nil, fmt.Errorf("optim: AdamW betas (%g, %g) must be in [0, 1)", cfg.Beta1, cfg.Beta2)
	}
	if !(cfg.Eps >= 0) || !(cfg.WeightDecay >= 0) {
		return nil, fmt.Errorf("optim: AdamW eps %g and weight decay %g must be ≥ 0", cfg.Eps, cfg.WeightDecay)
	}
	if err := checkParams(params); err != nil {
		return nil, err
	}
	hp, err := resolveGroups(params, groups, cfg.WeightDecay)
	if err != nil {
		return nil, err
	}
	o := &AdamW{
		cfg:    cfg,
		params: cloneParams(params),
		hp:     hp,
		m:      zeros(params),
		v:      zeros(params),
		coef:   make([]adamCoef, len(params)),
	}
	o.sh.init(sizes(params), o.updateUnit)
	return o, nil
}

// Step applies one AdamW update with learning rate lr.
func (o *AdamW) Step(lr float64, grads [][]float32) error { return o.StepScaled(lr, 1, grads) }

// StepScaled applies one AdamW update with learning rate lr from the
// gradients multiplied by gradScale, each product rounded to float32 as
// it is read; grads are not changed. With gradScale from
// Clipper.NormScale it updates as Clip and then Step do, bit for bit,
// without Clip's pass over the gradients.
func (o *AdamW) StepScaled(lr float64, gradScale float32, grads [][]float32) error {
	if err := checkLR(lr); err != nil {
		return err
	}
	if err := checkGrads(o.params, grads); err != nil {
		return err
	}
	o.step++
	t := float64(o.step)
	bc1 := 1 - math.Pow(o.cfg.Beta1, t)
	bc2 := 1 - math.Pow(o.cfg.Beta2, t)
	for i, h := range o.hp {
		eta := lr * h.lrScale
		o.coef[i] = adamCoef{decayMul: float32(1 - eta*h.weightDecay), stepSize: float32(eta / bc1)}
	}
	o.invSqrtBC2 = float32(1 / math.Sqrt(bc2))
	o.grads, o.gradScale = grads, gradScale
	o.sh.job.run()
	o.grads = nil
	return nil
}

func (o *AdamW) updateUnit(u int) {
	k := adamConst{
		b1: float32(o.cfg.Beta1), ob1: float32(1 - o.cfg.Beta1),
		b2: float32(o.cfg.Beta2), ob2: float32(1 - o.cfg.Beta2),
		eps: float32(o.cfg.Eps), invSqrtBC2: o.invSqrtBC2, gradScale: o.gradScale,
	}
	for _, s := range o.sh.part.unit(u) {
		adamwKernel(o.params[s.t].Data[s.lo:s.hi], o.grads[s.t][s.lo:s.hi], o.m[s.t][s.lo:s.hi], o.v[s.t][s.lo:s.hi], o.coef[s.t], k)
		if o.updated != nil && o.rowLen[s.t] > 0 {
			o.updated(s.t, s.lo/o.rowLen[s.t], s.hi/o.rowLen[s.t])
		}
	}
}

// ReportRows implements RowReporter. Its work units are cut at multiples
// of align[param] rows of the reported parameters, which does not change
// the update: each value's update is its own.
func (o *AdamW) ReportRows(rowLen, align []int, updated func(param, r0, r1 int)) error {
	if len(rowLen) != len(o.params) || len(align) != len(o.params) {
		return fmt.Errorf("optim: rows reported for %d and %d parameters, not %d", len(rowLen), len(align), len(o.params))
	}
	chunk := make([]int, len(o.params))
	for i, p := range o.params {
		if rowLen[i] == 0 {
			continue
		}
		if rowLen[i] < 0 || len(p.Data)%rowLen[i] != 0 || align[i] < 1 {
			return fmt.Errorf("optim: %s (%d values) reported in rows of %d, %d rows at a time", p.Name, len(p.Data), rowLen[i], align[i])
		}
		chunk[i] = rowLen[i] * align[i]
	}
	o.sh.initRows(sizes(o.params), chunk, o.updateUnit)
	o.rowLen, o.updated = slices.Clone(rowLen), updated
	return nil
}

// adamConst are the constants shared by all parameters in one step; 1−β is
// computed in float64 before rounding, as PyTorch does.
type adamConst struct {
	b1, ob1, b2, ob2, eps, invSqrtBC2 float32
	gradScale                         float32
}

// adamwKernel updates p, m and v (all of len(p)) in one pass with
// vec.AdamW (SIMD where the CPU has it):
//
//	g ← gradScale·g   (read, not stored)
//	m ← β1·m + (1−β1)·g
//	v ← β2·v + ((1−β2)·g)·g
//	p ← p·decayMul − (stepSize·m) / (√v·invSqrtBC2 + eps)
//
// each operation rounded to float32 in this order, with no fused
// multiply-adds, so the results are the same bits in every build.
func adamwKernel(p, g, m, v []float32, c adamCoef, k adamConst) {
	vec.AdamW(p, g, m, v, vec.AdamWCoef{
		Beta1: k.b1, OneMinusBeta1: k.ob1,
		Beta2: k.b2, OneMinusBeta2: k.ob2,
		Eps: k.eps, InvSqrtBC2: k.invSqrtBC2,
		DecayMul: c.decayMul, StepSize: c.stepSize, GradScale: k.gradScale,
	})
}

// StepCount returns the number of steps taken.
func (o *AdamW) StepCount() int { return o.step }

// StateTensors returns "optim.step" and, per parameter,
// "optim.exp_avg.<name>" and "optim.exp_avg_sq.<name>" with the
// parameter's shape.
func (o *AdamW) StateTensors() []Tensor {
	out := []Tensor{stepTensor(o.step)}
	out = append(out, stateTensors(OptimizerPrefix+"exp_avg.", o.params, o.m)...)
	return append(out, stateTensors(OptimizerPrefix+"exp_avg_sq.", o.params, o.v)...)
}

// LoadState restores the step count and moments from tensors named as
// StateTensors names them; nothing changes unless all of them are valid.
func (o *AdamW) LoadState(tensors []Tensor) error {
	want := append(stateTensors(OptimizerPrefix+"exp_avg.", o.params, o.m), stateTensors(OptimizerPrefix+"exp_avg_sq.", o.params, o.v)...)
	step, err := loadState(tensors, OptimizerPrefix, want, true)
	if err != nil {
		return err
	}
	o.step = step
	return nil
}
