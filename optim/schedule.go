package optim

import (
	"fmt"
	"math"
)

// Schedule gives the learning rate of an optimizer step. Steps count
// optimizer updates from 0; all schedules here are per step (a trainer that
// thinks in epochs multiplies by the steps per epoch). Negative steps are
// treated as 0.
type Schedule interface {
	LR(step int) float64
}

// DefaultWarmupLR is timm's --warmup-lr default.
const DefaultWarmupLR = 1e-6

// DeiTReferenceBatch is the batch size DeiT's learning rates refer to.
const DeiTReferenceBatch = 512

// ScaleLR applies DeiT's linear scaling rule: lr = baseLR × globalBatch/512,
// where globalBatch is the number of samples per optimizer step (all
// devices and accumulated micro-batches).
func ScaleLR(baseLR float64, globalBatch int) float64 {
	return baseLR * float64(globalBatch) / DeiTReferenceBatch
}

// Warmup ramps the learning rate linearly from InitLR at step 0 towards the
// schedule's base rate, reached at step Steps (timm's warmup_t and
// warmup_lr_init). Steps 0 means no warmup.
type Warmup struct {
	Steps  int
	InitLR float64
}

// at returns the warmup learning rate and true while step < Steps.
func (w Warmup) at(step int, base float64) (float64, bool) {
	if step >= w.Steps {
		return 0, false
	}
	return w.InitLR + float64(step)*(base-w.InitLR)/float64(w.Steps), true
}

func (w Warmup) validate() error {
	if w.Steps < 0 || !(w.InitLR >= 0) {
		return fmt.Errorf("optim: warmup steps %d and init lr %g must be ≥ 0", w.Steps, w.InitLR)
	}
	return nil
}

// decayStep returns the step counted by the decay part of a schedule: the
// step itself, or the steps since the end of warmup when prefix is set
// (timm's warmup_prefix).
func decayStep(step int, w Warmup, prefix bool) int {
	if prefix {
		return step - w.Steps
	}
	return step
}

// Cosine is timm's CosineLRScheduler (one cycle, k_decay 1) in steps: after
// warmup, lr = MinLR + ½(BaseLR−MinLR)(1+cos(π·t/Steps)), and MinLR from
// t = Steps on. t is the step itself (timm's default) or, with
// WarmupPrefix, the steps since warmup ended.
type Cosine struct {
	BaseLR, MinLR float64
	Steps         int // length of the cosine (timm's t_initial)
	Warmup        Warmup
	WarmupPrefix  bool
}

// LR returns the learning rate of step.
func (c Cosine) LR(step int) float64 {
	step = max(step, 0)
	if lr, ok := c.Warmup.at(step, c.BaseLR); ok {
		return lr
	}
	t := decayStep(step, c.Warmup, c.WarmupPrefix)
	if t >= c.Steps {
		return c.MinLR
	}
	return c.MinLR + 0.5*(c.BaseLR-c.MinLR)*(1+math.Cos(math.Pi*float64(t)/float64(c.Steps)))
}

// Validate checks that the rates are ≥ 0 and Steps > 0.
func (c Cosine) Validate() error {
	if !(c.BaseLR >= 0) || !(c.MinLR >= 0) || c.Steps <= 0 {
		return fmt.Errorf("optim: cosine schedule needs base lr %g ≥ 0, min lr %g ≥ 0 and steps %d > 0", c.BaseLR, c.MinLR, c.Steps)
	}
	return c.Warmup.validate()
}

// StepDecay is timm's StepLRScheduler in steps: after warmup,
// lr = BaseLR × Gamma^⌊t/DecaySteps⌋, with t as in Cosine.
type StepDecay struct {
	BaseLR       float64
	DecaySteps   int
	Gamma        float64
	Warmup       Warmup
	WarmupPrefix bool
}

// LR returns the learning rate of step.
func (s StepDecay) LR(step int) float64 {
	step = max(step, 0)
	if lr, ok := s.Warmup.at(step, s.BaseLR); ok {
		return lr
	}
	t := decayStep(step, s.Warmup, s.WarmupPrefix)
	return s.BaseLR * math.Pow(s.Gamma, float64(t/s.DecaySteps))
}

// Validate checks that BaseLR and Gamma are ≥ 0 and DecaySteps > 0.
func (s StepDecay) Validate() error {
	if !(s.BaseLR >= 0) || !(s.Gamma >= 0) || s.DecaySteps <= 0 {
		return fmt.Errorf("optim: step schedule needs base lr %g ≥ 0, gamma %g ≥ 0 and decay steps %d > 0", s.BaseLR, s.Gamma, s.DecaySteps)
	}
	return s.Warmup.validate()
}

// Constant keeps BaseLR after an optional warmup.
type Constant struct {
	BaseLR float64
	Warmup Warmup
}

// LR returns the learning rate of step.
func (c Constant) LR(step int) float64 {
	if lr, ok := c.Warmup.at(max(step, 0), c.BaseLR); ok {
		return lr
	}
	return c.BaseLR
}

// Validate checks that BaseLR is ≥ 0.
func (c Constant) Validate() error {
	if !(c.BaseLR >= 0) {
		return fmt.Errorf("optim: constant schedule needs base lr %g ≥ 0", c.BaseLR)
	}
	return c.Warmup.validate()
}

var (
	_ Schedule = Cosine{}
	_ Schedule = StepDecay{}
	_ Schedule = Constant{}
)
