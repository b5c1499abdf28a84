package train

import (
	"fmt"
	"math"
	"time"

	"github.com/vit-train/vit-train/comm"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/runner"
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
	graph   *nn.Graph
	loss    *trainingLoss
	rng     *ops.Randomness
	rank    int
	classes int           // the network's classes
	pixels  []float32     // the step's images (B, C, H, W)
	params  []optim.Param // every parameter, aligned with net.Params
	trained []int         // indices of the parameters the optimiser updates
	slot    []int         // parameter index -> index in trainP, -1 when frozen
	trainP  []optim.Param // params[trained]
	grads   [][]float32   // gradients of trainP, each shaped as its parameter
	opt     optim.Optimizer
	sched   optim.Schedule
	clip    *optim.Clipper
	accum   *optim.Accumulator
	ema     *optim.EMA
	avg     *gradAverager   // nil for one process
	ready   func(int) error // handGrad, bound once: the backward pass's hook when averaging overlaps it
	result  StepResult      // the last step's; its Extra is reused
	// packers[j] keep trainP[j] packed for their products, repacked by
	// the optimiser as it updates it (keepWeightsPacked).
	packers [][]ops.WeightPacker

	// OnMicroBatch, when set, is called after each micro-batch's forward
	// and backward pass with the position reached (pos.Batch counts the
	// micro-batch). Run's loop calls Hooks.At there, as AfterMicroBatch.
	OnMicroBatch func(pos checkpoint.State)
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
// c.Rank() of data-parallel job c (nil: one process): the training graph
// of data.batch_size images, the loss (distill.type), the parameters it
// trains (init.freeze_backbone), the optimiser (optim.*), the schedule
// (sched.*, epochs of stepsPerEpoch steps), the accumulation and the EMA.
func NewStepper(cfg Config, net model.Network, c comm.Communicator, stepsPerEpoch int) (*Stepper, error) {
	if c == nil {
		c = comm.Local()
	}
	s := &Stepper{cfg: cfg, net: net, rank: c.Rank(), classes: net.Spec().NumClasses()}
	if err := s.buildGraph(); err != nil {
		return nil, err
	}
	s.selectParams()
	var err error
	if s.opt, err = newOptimizer(cfg.Optim, net.Spec().Config, s.trainP); err != nil {
		return nil, err
	}
	if err := s.keepWeightsPacked(); err != nil {
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
		if s.avg, err = newGradAverager(c, s.trainP, cfg.Optim.AccumSteps == 1); err != nil {
			return nil, err
		}
		s.ready = s.handGrad
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
	if s.loss, err = newTrainingLoss(g, cfg.Distill); err != nil {
		return err
	}
	s.graph = g
	s.pixels, err = g.Float32Images()
	return err
}

// keepWeightsPacked has the layers whose products run in low precision
// keep their weights packed from step to step where the optimiser
// reports the rows it updates (optim.RowReporter): it repacks each piece
// of a weight as it writes it, while the piece is in cache, and the next
// forward pass packs nothing from memory.
func (s *Stepper) keepWeightsPacked() error {
	rows, ok := s.opt.(optim.RowReporter)
	if !ok {
		return nil
	}
	byParam, err := s.graph.KeepWeightsPacked()
	if err != nil {
		return err
	}
	s.packers = make([][]ops.WeightPacker, len(s.trainP))
	rowLen, align := make([]int, len(s.trainP)), make([]int, len(s.trainP))
	kept := false
	for j, i := range s.trained {
		for _, p := range byParam[i] {
			k, a := p.WeightRows()
			if rowLen[j] != 0 && rowLen[j] != k {
				return fmt.Errorf("train: %s is the weight of layers with rows of %d and %d values", s.trainP[j].Name, rowLen[j], k)
			}
			// A number of rows that every packer of the weight takes.
			if align[j] = max(align[j], 1); align[j]%a != 0 {
				align[j] *= a
			}
			rowLen[j] = k
			s.packers[j], kept = append(s.packers[j], p), true
		}
	}
	if !kept {
		s.packers = nil
		return nil
	}
	return rows.ReportRows(rowLen, align, s.repackRows)
}

// repackRows is the optimiser's report that rows [r0, r1) of trainP[j]
// have their new values.
func (s *Stepper) repackRows(j, r0, r1 int) {
	for _, p := range s.packers[j] {
		p.RepackWeightRows(s.trainP[j].Data, r0, r1)
	}
}

// selectParams picks the parameters to train: all, or the heads with a
// frozen backbone.
func (s *Stepper) selectParams() {
	s.params = s.net.Params()
	s.slot = make([]int, len(s.params))
	for i, p := range s.params {
		s.slot[i] = -1
		if !s.cfg.Init.FreezeBackbone || s.net.Spec().Config.IsHead(p.Name) {
			s.slot[i] = len(s.trainP)
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
	build, err := optimizers.lookup(cfg.Name)
	if err != nil {
		return nil, err
	}
	return build(cfg, params, groups)
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
	build, err := schedules.lookup(sc.Name)
	if err != nil {
		return nil, err
	}
	s := build(sc, lr, warm, cfg.Epochs*stepsPerEpoch, stepsPerEpoch)
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

// TimeOps makes the training graph's later runs, one a micro-batch, time
// each of their ops, until StopTiming (see runner.Program.TimeOps).
func (s *Stepper) TimeOps() (*runner.OpTimes, error) { return s.loss.Step.TimeOps() }

// StopTiming ends the timing that TimeOps started.
func (s *Stepper) StopTiming() { s.loss.Step.StopTiming() }

// FLOPs is the floating-point operations of one image's forward pass as
// the training graph runs it (nn.Graph.FLOPs).
func (s *Stepper) FLOPs() int64 { return s.loss.Step.FLOPs }

// GradBytes is the size of the gradients the step computes.
func (s *Stepper) GradBytes() int64 {
	n := int64(0)
	for _, p := range s.trainP {
		n += 4 * int64(len(p.Data))
	}
	return n
}

// Params returns every parameter of the network, in the order of the
// network's Params; the optimiser updates those of Trained.
func (s *Stepper) Params() []optim.Param { return s.params }

// Trained returns the parameters the optimiser updates: all, or the heads
// with init.freeze_backbone.
func (s *Stepper) Trained() []optim.Param { return s.trainP }

// StateTensors returns the state a checkpoint saves besides the weights:
// the optimiser's ("optim." names) and, with EMA, the averaged weights
// ("ema." names; nil without EMA).
func (s *Stepper) StateTensors() (optimState, emaState []optim.Tensor) {
	optimState = s.opt.StateTensors()
	if s.ema != nil {
		emaState = s.ema.StateTensors()
	}
	return optimState, emaState
}

// LoadState restores the optimiser's state and, with EMA, the averaged
// weights from tensors named as StateTensors names them.
func (s *Stepper) LoadState(optimState, emaState []optim.Tensor) error {
	if err := s.opt.LoadState(optimState); err != nil {
		return err
	}
	if s.ema == nil {
		return nil
	}
	if len(emaState) == 0 {
		return fmt.Errorf("ema.enabled is set but the checkpoint has no EMA weights")
	}
	return s.ema.LoadState(emaState)
}

// EMANetwork returns the network evaluating the EMA weights: the step's
// network sharing its other tensors (a ResNet's batch-norm statistics),
// or nil without EMA.
func (s *Stepper) EMANetwork() (model.Network, error) {
	if s.ema == nil {
		return nil, nil
	}
	return s.net.SharingWeights(s.ema.Weights())
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
		if s.OnMicroBatch != nil {
			s.OnMicroBatch(*pos)
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
	for _, ps := range s.packers {
		for _, p := range ps {
			p.StartRepack()
		}
	}
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
		err = s.runOverlapped(pos.Step)
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

// runOverlapped runs the training step forward and backward while the
// averager reduces its gradients across the ranks: each gradient is
// handed over as soon as the backward pass has computed it (handGrad),
// and the step returns once every bucket is averaged.
func (s *Stepper) runOverlapped(step int) error {
	if err := s.avg.start(s.grads); err != nil {
		return err
	}
	return s.avg.finish(step, s.loss.Step.RunReportingGrads(s.ready))
}

// handGrad gives the averager parameter i's gradient, just computed.
func (s *Stepper) handGrad(i int) error {
	j := s.slot[i]
	if j < 0 {
		return nil // frozen
	}
	if err := s.readGrad(j, i); err != nil {
		return err
	}
	return s.avg.ready(j)
}
