package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/ops"
	"github.com/vit-train/vit-train/model/viz"
	"github.com/vit-train/vit-train/optim"
)

// ErrInterrupted is returned by Run when its context is cancelled (Ctrl-C):
// a checkpoint of the exact position was saved first.
var ErrInterrupted = errors.New("training interrupted; resume with --resume")

// Options says where a run writes and how it reports.
type Options struct {
	Dir    string    // run folder
	Resume bool      // continue from Dir/last.safetensors
	Out    io.Writer // summary lines and progress bars
	// StopAfterSteps stops (like an interrupt, saving a checkpoint) after
	// this many optimiser steps in total; 0 disables it.
	StopAfterSteps int
}

// Summary is the outcome of a run.
type Summary struct {
	State State
	Last  Evaluation // last evaluation of the model
	// Teacher scores the distillation teacher on the evaluation data (once,
	// at the start); nil without a teacher or with logits from a file.
	Teacher     *Result
	EMA         *Result
	Seconds     float64
	Interrupted bool
}

// Checkpoint file names in a run folder.
const (
	LastCheckpoint = "last.safetensors"
	BestCheckpoint = "best.safetensors"
)

// trainer is one run in progress.
type trainer struct {
	cfg      Config
	opts     Options
	mc       model.Config // the ViT's configuration; zero for a ResNet
	ds       *Datasets
	net      network
	vit      *model.ViT // net's model when it is a ViT
	teacher  teacher    // nil unless distilling
	teacherR *Result    // the teacher's evaluation, when it has one
	obj      *objective
	eval     *model.Graph
	emaModel *model.ViT
	emaEval  *model.Graph
	trainL   *data.Loader
	evalL    *data.Loader
	mix      *augment.Mixup
	rng      *ops.Randomness
	params   []optim.Param // every parameter, aligned with net.Params
	train    []int         // indices of the parameters the optimiser updates
	trainP   []optim.Param // params[train]
	grads    [][]float32   // gradients of trainP
	opt      optim.Optimizer
	sched    optim.Schedule
	clip     *optim.Clipper
	accum    *optim.Accumulator
	ema      *optim.EMA
	state    State
	stepsLog *MetricsLog
	epochLog *MetricsLog
}

// Run trains as cfg says, writing checkpoints, metrics and reports to
// opts.Dir. Cancelling ctx saves a checkpoint and returns ErrInterrupted.
func Run(ctx context.Context, cfg Config, opts Options) (*Summary, error) {
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	t, err := newTrainer(cfg, opts)
	if err != nil {
		return nil, err
	}
	defer t.close()
	return t.run(ctx)
}

func newTrainer(cfg Config, opts Options) (*trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &trainer{cfg: cfg, opts: opts}
	var err error
	if t.ds, err = OpenDatasets(cfg.Data); err != nil {
		return nil, err
	}
	if err := t.newNetwork(); err != nil {
		return nil, err
	}
	lastPath := filepath.Join(opts.Dir, LastCheckpoint)
	var ck *Checkpoint
	if opts.Resume {
		if ck, err = LoadCheckpoint(lastPath); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
		if err := t.compatible(ck); err != nil {
			return nil, fmt.Errorf("resume from %s: %w", lastPath, err)
		}
	} else if _, err := os.Stat(lastPath); err == nil {
		return nil, fmt.Errorf("run folder %s already holds a checkpoint: use --resume, or another --out", opts.Dir)
	}
	if t.teacher, err = newTeacher(cfg, t.net, t.ds); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := t.build(); err != nil {
		return nil, err
	}
	if ck != nil {
		if err := t.restore(ck); err != nil {
			return nil, fmt.Errorf("resume from %s: %w", lastPath, err)
		}
	} else if cfg.Init.From != "" {
		if err := t.initFrom(cfg.Init); err != nil {
			return nil, err
		}
	}
	y, err := cfg.YAML()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(opts.Dir, "config.yaml"), y, 0o644); err != nil {
		return nil, err
	}
	keep := -1
	if ck != nil {
		keep = t.state.Step
	}
	if t.stepsLog, err = OpenMetrics(opts.Dir, "steps", keep); err != nil {
		return nil, err
	}
	if t.epochLog, err = OpenMetrics(opts.Dir, "epochs", keep); err != nil {
		return nil, err
	}
	return t, nil
}

// newNetwork creates the configured model, a ViT preset or a ResNet,
// initialised from the seed, and checks that it takes the data.
func (t *trainer) newNetwork() error {
	if IsResNet(t.cfg.Model.Name) {
		spec := t.cfg.resnetSpec(t.ds)
		if err := t.ds.checkInput(spec.Arch, spec.Channels, spec.NumClasses); err != nil {
			return err
		}
		n, err := newResNet(spec, t.cfg.Seed)
		if err != nil {
			return err
		}
		t.net = n
		return nil
	}
	mc, err := t.cfg.ModelConfig()
	if err != nil {
		return err
	}
	if err := t.ds.CheckModel(mc); err != nil {
		return err
	}
	t.mc = mc
	if t.vit, err = model.New(mc, t.cfg.Seed); err != nil {
		return err
	}
	t.net = vitNet{t.vit}
	return nil
}

// compatible reports a checkpoint whose model differs from the configured one.
func (t *trainer) compatible(ck *Checkpoint) error {
	if n, ok := t.net.(*resnetNet); ok {
		if ck.Arch != ArchResNet || *ck.ResNet != n.spec {
			return fmt.Errorf("the checkpoint's model (%s %+v %+v) differs from the configured one (%+v); resume with the run's config.yaml", ck.Arch, ck.Model, ck.ResNet, n.spec)
		}
		return nil
	}
	if ck.Arch != ArchViT || ck.Model != t.mc {
		return fmt.Errorf("the checkpoint's model (%+v) differs from the configured one (%+v); resume with the run's config.yaml", ck.Model, t.mc)
	}
	return nil
}

// build creates the model, graphs, loaders and optimiser.
func (t *trainer) build() error {
	cfg := t.cfg
	t.rng = ops.NewRandomness(cfg.Seed)
	g, err := t.net.Graph(cfg.Data.BatchSize, true, t.rng)
	if err != nil {
		return err
	}
	if t.obj, err = newObjective(g, cfg.Distill); err != nil {
		return err
	}
	if t.eval, err = t.net.Graph(cfg.Data.EvalBatchSize, false, nil); err != nil {
		return err
	}
	_, size := t.net.Input()
	trainP, evalP, err := Pipelines(cfg.Aug, size, t.ds.Mean, t.ds.Std)
	if err != nil {
		return err
	}
	if t.trainL, err = data.NewLoader(data.LoaderConfig{Dataset: t.ds.Train, BatchSize: cfg.Data.BatchSize, DropLast: true,
		Shuffle: true, Seed: cfg.Seed, Workers: cfg.Data.Workers, Pipeline: trainP}); err != nil {
		return err
	}
	if t.trainL.NumBatches() < 1 {
		return fmt.Errorf("config: data.batch_size = %d is larger than the %d training images", cfg.Data.BatchSize, t.ds.Train.Len())
	}
	if t.evalL, err = data.NewLoader(data.LoaderConfig{Dataset: t.ds.Eval, BatchSize: cfg.Data.EvalBatchSize,
		Seed: cfg.Seed, Workers: cfg.Data.Workers, Pipeline: evalP}); err != nil {
		return err
	}
	if cfg.Aug.Mixup > 0 || cfg.Aug.CutMix > 0 {
		t.mix = &augment.Mixup{MixupAlpha: cfg.Aug.Mixup, CutmixAlpha: cfg.Aug.CutMix, Prob: cfg.Aug.MixupProb,
			SwitchProb: cfg.Aug.SwitchProb, LabelSmoothing: cfg.Aug.Smoothing, CorrectLam: true, Classes: t.net.NumClasses()}
	}
	t.params = t.net.Params()
	for i, p := range t.params {
		if !cfg.Init.FreezeBackbone || isHead(p.Name) {
			t.train = append(t.train, i)
			t.trainP = append(t.trainP, t.params[i])
		}
	}
	t.grads = make([][]float32, len(t.trainP))
	if err := t.buildOptimizer(); err != nil {
		return err
	}
	if t.clip, err = optim.NewClipper(t.trainP); err != nil {
		return err
	}
	if cfg.Optim.AccumSteps > 1 {
		if t.accum, err = optim.NewAccumulator(t.trainP); err != nil {
			return err
		}
	}
	if cfg.EMA.Enabled {
		if t.ema, err = optim.NewEMA(t.params, cfg.EMA.Decay); err != nil {
			return err
		}
		if t.emaModel, err = t.vit.SharingWeights(t.ema.Weights()); err != nil {
			return err
		}
		if t.emaEval, err = t.emaModel.BuildGraph(cfg.Data.EvalBatchSize, false, nil); err != nil {
			return err
		}
	}
	return nil
}

func (t *trainer) buildOptimizer() error {
	cfg := t.cfg.Optim
	var groups []optim.Group
	var err error
	if cfg.LayerDecay > 0 && cfg.LayerDecay < 1 {
		groups, err = optim.LayerDecayGroups(t.trainP, cfg.WeightDecay, optim.DefaultNoDecayNames, cfg.LayerDecay, optim.TimmViTLayerMap(t.mc.Depth))
		if err != nil {
			return err
		}
	} else {
		groups = optim.WeightDecayGroups(t.trainP, cfg.WeightDecay, optim.DefaultNoDecayNames)
	}
	switch cfg.Name {
	case "adamw":
		t.opt, err = optim.NewAdamW(t.trainP, groups, optim.AdamWConfig{Beta1: cfg.Beta1, Beta2: cfg.Beta2, Eps: cfg.Eps, WeightDecay: cfg.WeightDecay})
	case "sgd":
		t.opt, err = optim.NewSGD(t.trainP, groups, optim.SGDConfig{Momentum: cfg.Momentum, Nesterov: cfg.Nesterov, WeightDecay: cfg.WeightDecay})
	}
	if err != nil {
		return err
	}
	t.sched, err = t.schedule()
	return err
}

// stepsPerEpoch is the number of optimiser steps in an epoch.
func (t *trainer) stepsPerEpoch() int {
	return max(1, t.trainL.NumBatches()/t.cfg.Optim.AccumSteps)
}

// schedule builds the learning-rate schedule in optimiser steps.
func (t *trainer) schedule() (optim.Schedule, error) {
	sc := t.cfg.Sched
	lr := t.cfg.Optim.LR
	if t.cfg.Optim.ScaleLR {
		lr = optim.ScaleLR(lr, t.cfg.Data.BatchSize*t.cfg.Optim.AccumSteps)
	}
	spe := float64(t.stepsPerEpoch())
	warm := optim.Warmup{Steps: int(math.Round(sc.WarmupEpochs * spe)), InitLR: sc.WarmupLR}
	var s interface {
		optim.Schedule
		Validate() error
	}
	switch sc.Name {
	case "cosine":
		s = optim.Cosine{BaseLR: lr, MinLR: sc.MinLR, Steps: t.cfg.Epochs * t.stepsPerEpoch(), Warmup: warm}
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

// initFrom loads a checkpoint's weights to fine-tune from.
func (t *trainer) initFrom(ic InitConfig) error {
	ck, err := LoadCheckpoint(ic.From)
	if err != nil {
		return err
	}
	if ck.Arch == ArchResNet {
		return fmt.Errorf("init.from %s holds a %s (a CNN), not a ViT", ic.From, ck.ResNet.Arch)
	}
	newHead := ck.Model.NumClasses != t.mc.NumClasses
	src := ck
	if ic.EMA {
		if src, err = ck.emaWeights(); err != nil {
			return err
		}
	}
	note, err := src.LoadWeights(t.vit, newHead)
	if err != nil {
		return fmt.Errorf("init.from %s: %w", ic.From, err)
	}
	fmt.Fprintf(t.opts.Out, "initialised from %s\n", ic.From)
	if note != "" {
		fmt.Fprintf(t.opts.Out, "  %s\n", note)
	}
	if newHead {
		fmt.Fprintf(t.opts.Out, "  new head for %d classes (the checkpoint has %d)\n", t.mc.NumClasses, ck.Model.NumClasses)
	}
	if ic.FreezeBackbone {
		fmt.Fprintf(t.opts.Out, "  backbone frozen: training %d of %d tensors\n", len(t.train), len(t.params))
	}
	return nil
}

// isHead reports whether a parameter belongs to a classification head.
func isHead(name string) bool {
	return strings.HasPrefix(name, "head.") || strings.HasPrefix(name, "head_dist.")
}

// restore loads weights, optimiser state, EMA and position from ck.
func (t *trainer) restore(ck *Checkpoint) error {
	if err := t.net.Load(ck); err != nil {
		return err
	}
	if err := t.opt.LoadState(ck.Optim); err != nil {
		return err
	}
	if t.ema != nil {
		if len(ck.EMA) == 0 {
			return fmt.Errorf("ema.enabled is set but the checkpoint has no EMA weights")
		}
		if err := t.ema.LoadState(ck.EMA); err != nil {
			return err
		}
	}
	t.state = ck.State
	return nil
}

func (t *trainer) close() {
	if t.stepsLog != nil {
		t.stepsLog.Close()
	}
	if t.epochLog != nil {
		t.epochLog.Close()
	}
}

// checkpoint returns the run's current checkpoint.
func (t *trainer) checkpoint() *Checkpoint {
	cfg := t.cfg
	ck := &Checkpoint{Arch: ArchViT, Model: t.mc, Config: &cfg, State: t.state, Mean: t.ds.Mean, Std: t.ds.Std, Classes: t.ds.Classes,
		Params: t.net.Tensors(), Optim: t.opt.StateTensors()}
	if n, ok := t.net.(*resnetNet); ok {
		spec := n.spec
		ck.Arch, ck.ResNet = ArchResNet, &spec
	}
	if t.ema != nil {
		ck.EMA = t.ema.StateTensors()
	}
	return ck
}

func (t *trainer) save(name string) error {
	return t.checkpoint().Save(filepath.Join(t.opts.Dir, name))
}

func (t *trainer) run(ctx context.Context) (*Summary, error) {
	start := time.Now()
	sum := &Summary{}
	out := t.opts.Out
	fmt.Fprintf(out, "%s; data %s: %d train / %d eval images; %d steps per epoch\n",
		t.net.Describe(), t.cfg.Data.Dataset, t.ds.Train.Len(), t.ds.Eval.Len(), t.stepsPerEpoch())
	if err := t.evaluateTeacher(); err != nil {
		return nil, err
	}
	sum.Teacher = t.teacherR
	if t.state.Epoch > 0 || t.state.Batch > 0 {
		fmt.Fprintf(out, "resuming at epoch %d, batch %d (step %d)\n", t.state.Epoch+1, t.state.Batch, t.state.Step)
	}
	for t.state.Epoch < t.cfg.Epochs {
		stats, err := t.trainEpoch(ctx)
		if errors.Is(err, ErrInterrupted) {
			if serr := t.save(LastCheckpoint); serr != nil {
				return nil, fmt.Errorf("saving the checkpoint after an interrupt: %w", serr)
			}
			fmt.Fprintf(out, "interrupted at epoch %d, batch %d (step %d); checkpoint saved to %s\n",
				t.state.Epoch+1, t.state.Batch, t.state.Step, filepath.Join(t.opts.Dir, LastCheckpoint))
			sum.State, sum.Interrupted, sum.Seconds = t.state, true, time.Since(start).Seconds()
			return sum, ErrInterrupted
		}
		if err != nil {
			return nil, err
		}
		ev, err := Evaluate(t.eval, t.evalL)
		if err != nil {
			return nil, err
		}
		res := ev.Result
		sum.Last = ev
		emaTop1 := math.NaN()
		if t.emaEval != nil {
			er, err := Evaluate(t.emaEval, t.evalL)
			if err != nil {
				return nil, err
			}
			sum.EMA, emaTop1 = &er.Result, er.Top1
		}
		t.state.Epoch++
		t.state.Batch = 0
		improved := res.Top1 > t.state.BestTop1 || t.state.BestEpoch == 0
		if improved {
			t.state.BestTop1, t.state.BestEpoch = res.Top1, t.state.Epoch
		}
		rec := []Field{{"epoch", float64(t.state.Epoch)}, {"step", float64(t.state.Step)},
			{"train_loss", stats.loss}, {"val_loss", res.Loss}, {"val_top1", res.Top1}, {"val_top5", res.Top5},
			{"ema_top1", emaTop1}, {"lr", stats.lr}, {"images_per_s", stats.imagesPerS}, {"epoch_seconds", stats.seconds}}
		if t.teacher != nil {
			rec = append(rec, Field{"val_top1_cls", ev.ClassHead.Top1}, Field{"val_top1_dist", ev.DistHead.Top1}, Field{"teacher_top1", t.teacherTop1()})
		}
		if err := t.epochLog.Write(rec); err != nil {
			return nil, err
		}
		t.plot()
		if err := res.WriteReport(t.opts.Dir, "eval_", t.ds.Classes); err != nil {
			return nil, err
		}
		if err := t.save(LastCheckpoint); err != nil {
			return nil, err
		}
		if improved {
			if err := t.save(BestCheckpoint); err != nil {
				return nil, err
			}
		}
		if t.cfg.Ckpt.Every > 0 && t.state.Epoch%t.cfg.Ckpt.Every == 0 {
			if err := t.save(fmt.Sprintf("epoch-%03d.safetensors", t.state.Epoch)); err != nil {
				return nil, err
			}
		}
		line := fmt.Sprintf("epoch %d/%d  train loss %.4f  val loss %.4f  top-1 %.2f%%  top-5 %.2f%%  lr %.3g  %.0f img/s  %.1f s",
			t.state.Epoch, t.cfg.Epochs, stats.loss, res.Loss, res.Top1, res.Top5, stats.lr, stats.imagesPerS, stats.seconds)
		if !math.IsNaN(emaTop1) {
			line += fmt.Sprintf("  EMA top-1 %.2f%%", emaTop1)
		}
		if ev.ClassHead != nil {
			line += fmt.Sprintf("  (class head %.2f%%, dist head %.2f%%)", ev.ClassHead.Top1, ev.DistHead.Top1)
		}
		if t.teacherR != nil {
			line += fmt.Sprintf("  teacher %.2f%%", t.teacherR.Top1)
		}
		fmt.Fprintln(out, line)
		if t.opts.StopAfterSteps > 0 && t.state.Step >= t.opts.StopAfterSteps && t.state.Epoch < t.cfg.Epochs {
			sum.State, sum.Interrupted, sum.Seconds = t.state, true, time.Since(start).Seconds()
			return sum, ErrInterrupted
		}
	}
	sum.State, sum.Seconds = t.state, time.Since(start).Seconds()
	fmt.Fprintf(out, "test accuracy %.2f%% (top-5 %.2f%%, best %.2f%% at epoch %d) after %d epochs, %.0f s; run folder %s\n",
		sum.Last.Top1, sum.Last.Top5, t.state.BestTop1, t.state.BestEpoch, t.cfg.Epochs, sum.Seconds, t.opts.Dir)
	if h := sum.Last.ClassHead; h != nil {
		line := fmt.Sprintf("class head %.2f%%, distillation head %.2f%%, average %.2f%%", h.Top1, sum.Last.DistHead.Top1, sum.Last.Top1)
		if t.teacherR != nil {
			line += fmt.Sprintf("; teacher %.2f%%", t.teacherR.Top1)
		}
		fmt.Fprintln(out, line)
	}
	return sum, nil
}

// epochStats summarises one epoch of training.
type epochStats struct {
	loss, lr, imagesPerS, seconds float64
}

// trainEpoch trains from the current position to the end of the epoch.
func (t *trainer) trainEpoch(ctx context.Context) (epochStats, error) {
	epoch := t.state.Epoch
	nb := t.trainL.NumBatches()
	accum := t.cfg.Optim.AccumSteps
	nb -= nb % accum // whole optimiser steps only
	it := t.trainL.Epoch(epoch, t.state.Batch)
	defer it.Close()
	var bar *progressbar.ProgressBar
	if t.cfg.Progress {
		bar = progressbar.NewOptions(nb, progressbar.OptionSetWriter(t.opts.Out), progressbar.OptionSetWidth(24),
			progressbar.OptionShowCount(), progressbar.OptionSetDescription(fmt.Sprintf("epoch %d/%d", epoch+1, t.cfg.Epochs)),
			progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(200*time.Millisecond))
		_ = bar.Set(t.state.Batch)
	}
	start := time.Now()
	var lossSum float64
	var lossN, images int
	var lr float64
	s := t.obj.step
	for t.state.Batch < nb && it.Next() {
		select {
		case <-ctx.Done():
			return epochStats{}, ErrInterrupted
		default:
		}
		b := it.Batch()
		n := b.N
		var err error
		mix := augment.MixInfo{Lam: 1}
		if t.mix != nil {
			mix, err = b.Mix(*t.mix, t.obj.targets)
		} else {
			err = b.OneHot(t.net.NumClasses(), t.cfg.Aug.Smoothing, t.obj.targets)
		}
		pixels := s.ImageData.([]float32)
		copy(pixels, b.Images)
		if err == nil && t.teacher != nil {
			// The teacher sees the student's batch, after Mixup/CutMix.
			err = t.teacher.fill(pixels, b.Indices[:n], mix, t.obj.teacher)
		}
		b.Release()
		if err != nil {
			return epochStats{}, err
		}
		// Dropout and drop-path masks follow the data position, so a resumed
		// run draws the masks of the uninterrupted one.
		t.rng.SetStep(uint64(epoch)<<32 | uint64(t.state.Batch))
		if err := s.Run(); err != nil {
			return epochStats{}, err
		}
		loss := s.LossValue()
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return epochStats{}, fmt.Errorf("loss is %v at epoch %d, batch %d (step %d); stopping, the last checkpoint (%s) is kept",
				loss, epoch+1, t.state.Batch, t.state.Step, filepath.Join(t.opts.Dir, LastCheckpoint))
		}
		for j, i := range t.train {
			t.grads[j] = s.Grad(i)
		}
		grads := t.grads
		t.state.Batch++
		if t.accum != nil {
			if err := t.accum.Add(grads, 1); err != nil {
				return epochStats{}, err
			}
			if t.accum.Count() < accum {
				continue
			}
			if grads, err = t.accum.Mean(); err != nil {
				return epochStats{}, err
			}
			t.accum.Reset()
		}
		norm, err := t.clip.Clip(grads, t.cfg.Optim.ClipGrad)
		if err != nil {
			return epochStats{}, err
		}
		lr = t.sched.LR(t.state.Step)
		if err := t.opt.Step(lr, grads); err != nil {
			return epochStats{}, err
		}
		if t.ema != nil {
			t.ema.Update()
		}
		t.state.Step++
		lossSum += loss
		lossN++
		images += n * accum
		elapsed := time.Since(start).Seconds()
		if t.cfg.LogEvery > 0 && t.state.Step%t.cfg.LogEvery == 0 {
			rec := []Field{{"step", float64(t.state.Step)}, {"epoch", float64(epoch) + float64(t.state.Batch)/float64(nb)},
				{"loss", loss}, {"lr", lr}, {"grad_norm", norm}, {"images_per_s", float64(images) / elapsed}}
			for i, name := range t.obj.names {
				rec = append(rec, Field{name, s.ExtraValue(i)})
			}
			if err := t.stepsLog.Write(rec); err != nil {
				return epochStats{}, err
			}
		}
		if bar != nil {
			bar.Describe(fmt.Sprintf("epoch %d/%d loss %.4f lr %.2e %.0f img/s", epoch+1, t.cfg.Epochs, loss, lr, float64(images)/elapsed))
			_ = bar.Set(t.state.Batch)
		}
		if t.opts.StopAfterSteps > 0 && t.state.Step >= t.opts.StopAfterSteps {
			return epochStats{}, ErrInterrupted
		}
	}
	if err := it.Err(); err != nil {
		return epochStats{}, err
	}
	if bar != nil {
		_ = bar.Finish()
	}
	sec := time.Since(start).Seconds()
	return epochStats{loss: lossSum / math.Max(1, float64(lossN)), lr: lr, imagesPerS: float64(images) / sec, seconds: sec}, nil
}

// evaluateTeacher scores the teacher on the evaluation data, once.
func (t *trainer) evaluateTeacher() error {
	if t.teacher == nil {
		return nil
	}
	res, ok, err := t.teacher.evaluate(t.evalL)
	if err != nil {
		return fmt.Errorf("evaluating the teacher: %w", err)
	}
	d := t.cfg.Distill
	line := fmt.Sprintf("distillation %s (alpha %g, tau %g) from %s", d.Type, d.Alpha, d.Tau, t.teacher.describe())
	if ok {
		t.teacherR = &res
		line += fmt.Sprintf(": teacher top-1 %.2f%%", res.Top1)
	}
	fmt.Fprintln(t.opts.Out, line)
	return nil
}

// teacherTop1 is the teacher's top-1 accuracy, NaN when unknown.
func (t *trainer) teacherTop1() float64 {
	if t.teacherR == nil {
		return math.NaN()
	}
	return t.teacherR.Top1
}

// plot redraws the run's charts from its metrics; a failure is a warning.
func (t *trainer) plot() {
	steps, err := ReadMetrics(t.opts.Dir, "steps")
	var epochs []map[string]float64
	if err == nil {
		epochs, err = ReadMetrics(t.opts.Dir, "epochs")
	}
	if err == nil {
		err = viz.PlotRun(t.opts.Dir, steps, epochs)
	}
	if err != nil {
		fmt.Fprintf(t.opts.Out, "warning: plotting the training curves: %v\n", err)
	}
}
