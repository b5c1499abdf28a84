package optim

import "fmt"

// SGDConfig holds SGD's hyperparameters (dampening is always 0).
// WeightDecay applies when the optimizer is built without groups.
type SGDConfig struct {
	Momentum    float64
	Nesterov    bool
	WeightDecay float64
}

// SGD is stochastic gradient descent with momentum, exactly torch.optim.SGD
// with dampening 0. With per-parameter learning rate η = lr×LRScale, weight
// decay λ (L2, added to the gradient) and momentum μ:
//
//	d ← g + λ·p
//	b ← d on the first step, μ·b + d afterwards   (when μ ≠ 0)
//	d ← d + μ·b if Nesterov, else b               (when μ ≠ 0)
//	p ← p − η·d
type SGD struct {
	cfg    SGDConfig
	params []Param
	hp     []hyper
	buf    [][]float32 // momentum buffers; nil when Momentum is 0
	step   int

	// Per-step values read by the work units.
	grads     [][]float32
	lr        float64
	gradScale float32
	sh        sharded
}

// NewSGD builds an SGD optimizer over params (whose Data it updates in
// place) with the given groups (nil: one group with cfg.WeightDecay).
func NewSGD(params []Param, groups []Group, cfg SGDConfig) (*SGD, error) {
	if !(cfg.Momentum >= 0) || !(cfg.WeightDecay >= 0) {
		return nil, fmt.Errorf("optim: SGD momentum %g and weight decay %g must be ≥ 0", cfg.Momentum, cfg.WeightDecay)
	}
	if cfg.Nesterov && cfg.Momentum == 0 {
		return nil, fmt.Errorf("optim: SGD Nesterov needs momentum > 0")
	}
	if err := checkParams(params); err != nil {
		return nil, err
	}
	hp, err := resolveGroups(params, groups, cfg.WeightDecay)
	if err != nil {
		return nil, err
	}
	o := &SGD{cfg: cfg, params: cloneParams(params), hp: hp}
	if cfg.Momentum != 0 {
		o.buf = zeros(params)
	}
	o.sh.init(sizes(params), o.updateUnit)
	return o, nil
}

// Step applies one SGD update with learning rate lr.
func (o *SGD) Step(lr float64, grads [][]float32) error { return o.StepScaled(lr, 1, grads) }

// StepScaled applies one SGD update with learning rate lr from the
// gradients multiplied by gradScale, each product rounded to float32 as
// it is read; grads are not changed. With gradScale from
// Clipper.NormScale it updates as Clip and then Step do, bit for bit.
func (o *SGD) StepScaled(lr float64, gradScale float32, grads [][]float32) error {
	if err := checkLR(lr); err != nil {
		return err
	}
	if err := checkGrads(o.params, grads); err != nil {
		return err
	}
	o.grads, o.lr, o.gradScale = grads, lr, gradScale
	o.sh.job.run()
	o.grads = nil
	o.step++
	return nil
}

func (o *SGD) updateUnit(u int) {
	mom := float32(o.cfg.Momentum)
	first := o.step == 0
	for _, s := range o.sh.part.unit(u) {
		h := o.hp[s.t]
		lr, wd := float32(o.lr*h.lrScale), float32(h.weightDecay)
		p, g := o.params[s.t].Data[s.lo:s.hi], o.grads[s.t][s.lo:s.hi]
		if o.buf == nil {
			sgdKernel(p, g, o.gradScale, lr, wd)
		} else {
			sgdMomentumKernel(p, g, o.buf[s.t][s.lo:s.hi], o.gradScale, lr, wd, mom, first, o.cfg.Nesterov)
		}
	}
}

// sgdKernel is plain SGD with L2 weight decay over len(p) elements, from
// the gradient g times scale.
func sgdKernel(p, g []float32, scale, lr, wd float32) {
	g = g[:len(p)]
	for i := range p {
		p[i] -= lr * (float32(g[i]*scale) + wd*p[i])
	}
}

// sgdMomentumKernel is SGD with (Nesterov) momentum from the gradient g
// times scale; first marks the step that initialises the buffer b.
func sgdMomentumKernel(p, g, b []float32, scale, lr, wd, mom float32, first, nesterov bool) {
	n := len(p)
	g, b = g[:n], b[:n]
	keep := mom
	if first {
		keep = 0
	}
	for i := range p {
		d := float32(g[i]*scale) + wd*p[i]
		bi := keep*b[i] + d
		b[i] = bi
		if nesterov {
			d += mom * bi
		} else {
			d = bi
		}
		p[i] -= lr * d
	}
}

// StepCount returns the number of steps taken.
func (o *SGD) StepCount() int { return o.step }

// StateTensors returns "optim.step" and, when momentum is on,
// "optim.momentum_buffer.<name>" per parameter.
func (o *SGD) StateTensors() []Tensor {
	return append([]Tensor{stepTensor(o.step)}, o.bufferTensors()...)
}

func (o *SGD) bufferTensors() []Tensor {
	if o.buf == nil {
		return nil
	}
	return stateTensors(OptimizerPrefix+"momentum_buffer.", o.params, o.buf)
}

// LoadState restores the step count and momentum buffers from tensors named
// as StateTensors names them; nothing changes unless all of them are valid.
func (o *SGD) LoadState(tensors []Tensor) error {
	step, err := loadState(tensors, OptimizerPrefix, o.bufferTensors(), true)
	if err != nil {
		return err
	}
	o.step = step
	return nil
}
