package train

import (
	"fmt"
	"math"
	"time"

	"github.com/vit-train/vit-train/comm"
	"github.com/vit-train/vit-train/distill"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/optim"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// Stepper is the optimiser step of a run: optim.accum_steps micro-batches
// forward and backward, their gradients read (and accumulated), averaged
// across the ranks of a data-parallel job, clipped, applied by the
// optimiser at the schedule's learning rate, and the EMA updated. Run's
// loop takes its steps; `vit-train bench` times them.
type Stepper struct {
	cfg     Config
	net     model.Network
	loss    *distill.TrainingLoss
	rng     *ops.Randomness
	rank    int
	classes int           // the network's classes
	pixels  []float32     // the step's images (B, C, H, W)
	params  []optim.Param // every parameter, aligned with net.Params
	trained []int         // indices of the parameters the optimiser updates
	trainP  []optim.Param // params[trained]
	grads   [][]float32   // gradients of trainP
	opt     optim.Optimizer
	sched   optim.Schedule
	clip    *optim.Clipper
	accum   *optim.Accumulator
	ema     *optim.EMA
	avg     *gradAverager                     // nil for one process
	result  StepResult                        // the last step's; its Extra is reused
	at      func(LoopPoint, checkpoint.State) // Options.At; nil when unset
}

// StepResult is one optimiser step.
type StepResult struct {
	Loss     float64   // mean loss of the step's micro-batches
	Extra    []float64 // mean of each logged loss term (LossNames); reused by the next step
	LR       float64   // learning rate of the update
	GradNorm float64   // global norm of the mean gradient, before clipping
	Images   int       // images of the step's micro-batches (all ranks')
}

// Inputs are the buffers a micro-batch is written into.
type Inputs struct {
	Images  []float32 // (B, C, H, W)
	Targets []float32 // soft targets (B, classes)
	Teacher []float32 // the teacher's logits (B, classes); nil unless distilling
	Classes int
}

// MicroBatches supplies the micro-batches of optimiser steps.
type MicroBatches interface {
	// Fill writes the next micro-batch into in and returns its number of
	// images.
	Fill(in Inputs) (int, error)
}

// NewStepper builds the optimiser step cfg describes for net, as rank
// opts.Comm.Rank() of data-parallel job opts.Comm (nil: one process),
// calling opts.At after each micro-batch: the training graph
// of data.batch_size images, the loss (distill.type), the parameters it
// trains (init.freeze_backbone), the optimiser (optim.*), the schedule
// (sched.*, epochs of stepsPerEpoch steps), the accumulation and the EMA.
func NewStepper(cfg Config, net model.Network, opts Options, stepsPerEpoch int) (*Stepper, error) {
	c := opts.Comm
	if c == nil {
		c = comm.Local()
	}
	s := &Stepper{cfg: cfg, net: net, rank: c.Rank(), classes: net.Spec().NumClasses(), at: opts.At}
	if err := s.buildGraph(); err != nil {
		return nil, err
	}
	s.selectParams()
	var err error
	if s.opt, err = newOptimizer(cfg.Optim, net.Spec().Config, s.trainP); err != nil {
		return nil, err
	}
	if s.sched, err = newSchedule(cfg, stepsPerEpoch, c.Size()); err != nil {
		return nil, err
	}
	if s.clip, err = optim.NewClipper(s.trainP); err != nil {
		return nil, err
	}
	if cfg.Optim.AccumSteps > 1 {
		if s.accum, err = optim.NewAccumulator(s.trainP); err != nil {
			return nil, err
		}
	}
	if cfg.EMA.Enabled {
		if s.ema, err = optim.NewEMA(s.params, cfg.EMA.Decay); err != nil {
			return nil, err
		}
	}
	if c.Size() > 1 {
		if s.avg, err = newGradAverager(s, c); err != nil {
			return nil, err
		}
	}
	s.result.Extra = make([]float64, len(s.loss.Names))
	return s, nil
}

// buildGraph creates the training graph and its loss.
func (s *Stepper) buildGraph() error {
	cfg := s.cfg
	s.rng = ops.NewRandomness(cfg.Seed)
	g, err := s.net.Graph(cfg.Data.BatchSize, true, s.rng)
	if err != nil {
		return err
	}
	if cfg.Model.GradCheckpointing {
		if len(g.Blocks) == 0 {
			return fmt.Errorf("config: model.grad_checkpointing: %s has no encoder blocks to recompute", s.net.Spec().Name())
		}
		g.GradCheckpointing = true
	}
	if s.loss, err = distill.NewTrainingLoss(g, cfg.Distill); err != nil {
		return err
	}
	s.pixels, err = g.Float32Images()
	return err
}

// selectParams picks the parameters to train: all, or the heads with a
// frozen backbone.
func (s *Stepper) selectParams() {
	s.params = s.net.Params()
	for i, p := range s.params {
		if !s.cfg.Init.FreezeBackbone || s.net.Spec().Config.IsHead(p.Name) {
			s.trained = append(s.trained, i)
			s.trainP = append(s.trainP, s.params[i])
		}
	}
	s.grads = make([][]float32, len(s.trainP))
}

// newOptimizer creates optim.name over params, grouped for weight decay
// (and layer decay) by the architecture's no-decay set and layer map.
func newOptimizer(cfg OptimConfig, arch model.Config, params []optim.Param) (optim.Optimizer, error) {
	var groups []optim.Group
	if cfg.LayerDecay > 0 && cfg.LayerDecay < 1 {
		var err error
		if groups, err = optim.LayerDecayGroups(params, cfg.WeightDecay, arch.NoWeightDecay(), cfg.LayerDecay, arch.LayerMap()); err != nil {
			return nil, err
		}
	} else {
		groups = optim.WeightDecayGroups(params, cfg.WeightDecay, arch.NoWeightDecay())
	}
	switch cfg.Name {
	case "adamw":
		return optim.NewAdamW(params, groups, optim.AdamWConfig{Beta1: cfg.Beta1, Beta2: cfg.Beta2, Eps: cfg.Eps, WeightDecay: cfg.WeightDecay})
	case "sgd":
		return optim.NewSGD(params, groups, optim.SGDConfig{Momentum: cfg.Momentum, Nesterov: cfg.Nesterov, WeightDecay: cfg.WeightDecay})
	}
	return nil, fmt.Errorf("config: optim.name = %q: want adamw or sgd", cfg.Name)
}

// newSchedule builds the learning-rate schedule in optimiser steps, for
// epochs of stepsPerEpoch steps taken by a job of ranks processes.
func newSchedule(cfg Config, stepsPerEpoch, ranks int) (optim.Schedule, error) {
	sc := cfg.Sched
	lr := cfg.Optim.LR
	if cfg.Optim.ScaleLR {
		lr = optim.ScaleLR(lr, cfg.Data.BatchSize*cfg.Optim.AccumSteps*ranks)
	}
	spe := float64(stepsPerEpoch)
	warm := optim.Warmup{Steps: int(math.Round(sc.WarmupEpochs * spe)), InitLR: sc.WarmupLR}
	var s interface {
		optim.Schedule
		Validate() error
	}
	switch sc.Name {
	case "cosine":
		s = optim.Cosine{BaseLR: lr, MinLR: sc.MinLR, Steps: cfg.Epochs * stepsPerEpoch, Warmup: warm}
	case "step":
		s = optim.StepDecay{BaseLR: lr, DecaySteps: max(1, int(math.Round(sc.DecayEpochs*spe))), Gamma: sc.DecayRate, Warmup: warm}
	default:
		s = optim.Constant{BaseLR: lr, Warmup: warm}
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("config: sched: %w", err)
	}
	return s, nil
}

// Inputs returns the buffers micro-batches are written into.
func (s *Stepper) Inputs() Inputs {
	return Inputs{Images: s.pixels, Targets: s.loss.Targets, Teacher: s.loss.Teacher, Classes: s.classes}
}

// LossNames names the loss terms of StepResult.Extra.
func (s *Stepper) LossNames() []string { return s.loss.Names }

// BufferBytes is the size of the training graph's activation and
// gradient buffers.
func (s *Stepper) BufferBytes() int64 { return s.loss.Step.BufferBytes() }

// GradBytes is the size of the gradients the step computes.
func (s *Stepper) GradBytes() int64 {
	n := int64(0)
	for _, p := range s.trainP {
		n += 4 * int64(len(p.Data))
	}
	return n
}

// Step takes one optimiser step at position pos: the accum_steps
// micro-batches of src forward and backward (pos.Batch advancing by one
// each), then the update; pos.Step advances by one. The loss and loss
// terms it reports are the means over the micro-batches (and the ranks).
// An interrupted step leaves the weights unchanged only if it failed
// before the update.
func (s *Stepper) Step(pos *checkpoint.State, src MicroBatches) (StepResult, error) {
	accum := s.cfg.Optim.AccumSteps
	r := &s.result
	r.Loss, r.LR, r.GradNorm, r.Images = 0, 0, 0, 0
	clear(r.Extra)
	if s.accum != nil {
		s.accum.Reset()
	}
	for range accum {
		n, loss, err := s.microBatch(pos, src)
		if err != nil {
			return *r, err
		}
		r.Loss += loss / float64(accum)
		r.Images += n
		for i := range r.Extra {
			r.Extra[i] += s.loss.Step.ExtraValue(i) / float64(accum)
		}
		if err := s.collectGrads(); err != nil {
			return *r, err
		}
		if s.at != nil {
			s.at(AfterMicroBatch, *pos)
		}
	}
	if err := s.update(pos, r); err != nil {
		return *r, err
	}
	pos.Step++
	return *r, nil
}

// update averages the step's gradient over the ranks, clips it, applies
// it and updates the EMA.
func (s *Stepper) update(pos *checkpoint.State, r *StepResult) error {
	grads, err := s.stepGrads()
	if err != nil {
		return err
	}
	if s.avg != nil {
		if err := s.avg.reduce(pos.Step, grads, r); err != nil {
			return err
		}
	}
	// The optimiser applies the clipping factor as it reads the gradients.
	var scale float32
	if r.GradNorm, scale, err = s.clip.NormScale(grads, s.cfg.Optim.ClipGrad); err != nil {
		return err
	}
	r.LR = s.sched.LR(pos.Step)
	if err := s.opt.StepScaled(r.LR, scale, grads); err != nil {
		return err
	}
	if s.ema != nil {
		s.ema.Update()
	}
	return nil
}

// microBatch fills the step's inputs with src's next micro-batch and runs
// the step forward and backward. It returns the batch's size and loss.
func (s *Stepper) microBatch(pos *checkpoint.State, src MicroBatches) (n int, loss float64, err error) {
	if n, err = src.Fill(s.Inputs()); err != nil {
		return 0, 0, err
	}
	// Dropout and drop-path masks follow the data position (and the rank,
	// whose batches hold other images), so a resumed run draws the masks of
	// the uninterrupted one.
	s.rng.SetStep(uint64(s.rank)<<56 | uint64(pos.Epoch)<<32 | uint64(pos.Batch))
	if s.avg != nil && s.avg.overlap {
		err = s.avg.runOverlapped(pos.Step)
	} else {
		err = s.loss.Step.Run()
	}
	if err != nil {
		return 0, 0, err
	}
	loss = s.loss.Step.LossValue()
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return 0, 0, fmt.Errorf("loss is %v at epoch %d, batch %d (step %d)", loss, pos.Epoch+1, pos.Batch, pos.Step)
	}
	pos.Batch++
	return n, loss, nil
}

// collectGrads reads the last micro-batch's gradients into s.grads and,
// when accumulating, adds them to the accumulator.
func (s *Stepper) collectGrads() error {
	for j, i := range s.trained {
		if err := s.readGrad(j, i); err != nil {
			return err
		}
	}
	if s.accum == nil {
		return nil
	}
	return s.accum.Add(s.grads, 1)
}

// readGrad points s.grads[j] at the last run's gradient of parameter i,
// trainable parameter j.
func (s *Stepper) readGrad(j, i int) error {
	g, err := s.loss.Step.Grad(i)
	if err != nil {
		return fmt.Errorf("training step: %s: %w", s.trainP[j].Name, err)
	}
	s.grads[j] = g
	return nil
}

// stepGrads is the gradient of the optimiser step: the last micro-batch's,
// or the mean of the accumulated ones.
func (s *Stepper) stepGrads() ([][]float32, error) {
	if s.accum == nil {
		return s.grads, nil
	}
	return s.accum.Mean()
}

// AverageAfterBackward makes a data-parallel step average its gradients
// after the backward pass instead of bucket by bucket during it (as it
// does with optim.accum_steps = 1); bench times both. It does nothing for
// one process.
func (s *Stepper) AverageAfterBackward(after bool) {
	if s.avg != nil {
		s.avg.overlap = !after && s.cfg.Optim.AccumSteps == 1
	}
}

// CommTime returns, and resets, the time data-parallel steps spent
// averaging gradients after the backward pass and waiting for the
// averaging that overlapped it.
func (s *Stepper) CommTime() (after, wait time.Duration) {
	if s.avg == nil {
		return 0, 0
	}
	after, wait = s.avg.after, s.avg.wait
	s.avg.after, s.avg.wait = 0, 0
	return after, wait
}

// gradAverager averages a step's gradients, losses and image counts over
// the ranks of a data-parallel job.
type gradAverager struct {
	s       *Stepper
	comm    comm.Communicator
	reducer *comm.Reducer
	// overlap averages each step's gradients during its backward pass
	// (one micro-batch per step): ready hands each gradient to the
	// reducer as soon as it is computed.
	overlap bool
	ready   func(i int) error
	slot    []int     // parameter index -> index in trainP, -1 when frozen
	buf     []float64 // reduceLosses's buffer

	after, wait time.Duration // see CommTime
}

func newGradAverager(s *Stepper, c comm.Communicator) (*gradAverager, error) {
	sizes := make([]int, len(s.trainP))
	for i, p := range s.trainP {
		sizes[i] = len(p.Data)
	}
	reducer, err := comm.NewReducer(c, sizes, 0)
	if err != nil {
		return nil, err
	}
	a := &gradAverager{s: s, comm: c, reducer: reducer, overlap: s.cfg.Optim.AccumSteps == 1}
	a.slot = make([]int, len(s.params))
	for i := range a.slot {
		a.slot[i] = -1
	}
	for j, i := range s.trained {
		a.slot[i] = j
	}
	a.ready = a.handGrad
	return a, nil
}

// runOverlapped runs the training step forward and backward while the
// reducer averages its gradients across the ranks: each bucket is reduced
// as soon as the backward pass has computed all of its gradients (the last
// layers' first), and the step returns once every bucket is done.
func (a *gradAverager) runOverlapped(step int) error {
	if err := a.reducer.Start(a.s.grads); err != nil {
		return err
	}
	err := a.s.loss.Step.RunReportingGrads(a.ready)
	t := time.Now()
	if werr := a.reducer.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("averaging the gradients of step %d: %w", step+1, werr)
	}
	a.wait += time.Since(t)
	return err
}

// handGrad gives the reducer parameter i's gradient, just computed.
func (a *gradAverager) handGrad(i int) error {
	j := a.slot[i]
	if j < 0 {
		return nil // frozen
	}
	if err := a.s.readGrad(j, i); err != nil {
		return err
	}
	return a.reducer.Ready(j)
}

// reduce replaces the step's gradient by its mean over the ranks (unless
// the backward pass already did), its loss and loss terms by their means
// and its image count by their sum.
func (a *gradAverager) reduce(step int, grads [][]float32, r *StepResult) error {
	if !a.overlap {
		t := time.Now()
		if err := a.reducer.AllreduceMean(grads); err != nil {
			return fmt.Errorf("averaging the gradients of step %d: %w", step+1, err)
		}
		a.after += time.Since(t)
	}
	return a.reduceLosses(step, r)
}

// reduceLosses averages the loss terms and sums the image counts of the
// ranks, in one allreduce.
func (a *gradAverager) reduceLosses(step int, r *StepResult) error {
	n := a.comm.Size()
	buf := append(append(a.buf[:0], r.Loss, float64(r.Images)), r.Extra...)
	a.buf = buf
	if err := a.comm.AllreduceSumFloat64(buf); err != nil {
		return fmt.Errorf("summing the losses of step %d: %w", step+1, err)
	}
	r.Loss, r.Images = buf[0]/float64(n), int(buf[1])
	for i := range r.Extra {
		r.Extra[i] = buf[2+i] / float64(n)
	}
	return nil
}
