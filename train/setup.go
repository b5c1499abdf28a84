package train

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/vit-train/vit-train/comm"
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/atomicfile"
	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// setup builds a run's trainer, in the order build lists: the data,
// the network fitted to it, the checkpoint a resume continues, the
// teacher, the batch source, the optimiser step and the evaluator, the
// weights (restored or initialised) shared by the ranks, and the run
// folder's configuration and logs.
type setup struct {
	t  *trainer    // the trainer being built
	ck *Checkpoint // the checkpoint a resumed run continues; nil for a new run
}

// newTrainer builds the run cfg describes, with opts, ready to loop.
func newTrainer(cfg Config, opts Options) (*trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Comm == nil {
		opts.Comm = comm.Local()
	}
	if opts.Out == nil || opts.Comm.Rank() != 0 {
		opts.Out = io.Discard
	}
	s := &setup{t: &trainer{cfg: cfg, opts: opts, comm: opts.Comm}}
	if err := s.build(); err != nil {
		s.t.close()
		return nil, err
	}
	return s.t, nil
}

// build runs the steps of the set-up in order.
func (s *setup) build() error {
	for _, step := range []func() error{s.openData, s.newNetwork, s.openCheckpoint, s.openTeacher, s.prepareDir,
		s.buildSource, s.buildStep, s.buildEvaluator, s.loadWeights, s.syncReplicas, s.writeRunFiles, s.adaptReplicas} {
		if err := step(); err != nil {
			return err
		}
	}
	s.t.state.Replicas = s.t.replicas()
	return nil
}

// openData opens the data sets the configuration names.
func (s *setup) openData() error {
	var err error
	if s.t.ds, err = OpenDatasets(s.t.cfg.Data); err != nil {
		return err
	}
	if note := s.t.ds.UnreadNote(); note != "" {
		fmt.Fprintf(s.t.opts.Out, "note: %s\n", note)
	}
	return nil
}

// newNetwork creates the configured network, its unset input taken from
// the data, initialised from the seed, after checking that it takes the
// data.
func (s *setup) newNetwork() error {
	t := s.t
	spec, err := s.fitData()
	if err != nil {
		return err
	}
	if err := t.ds.CheckModel(spec); err != nil {
		return err
	}
	t.net, err = NewNetwork(spec, t.cfg.Seed, t.cfg.Model)
	return err
}

// fitData resolves the model's configuration against the data
// (FitToData), printing the note of what it took from the data.
func (s *setup) fitData() (model.Spec, error) {
	spec, note, err := FitToData(&s.t.cfg, s.t.ds)
	if note != "" {
		fmt.Fprintf(s.t.opts.Out, "note: %s\n", note)
	}
	return spec, err
}

// FitToData resolves the model of cfg against the data ds: unset inputs
// (a ResNet's) are the data's, and a model whose channels or class count
// model.in_chans or model.num_classes leave to its preset takes the
// data's instead, recorded in cfg.Model and said in note ("" where
// nothing was taken). Training and `bench --data` fit their models so.
func FitToData(cfg *Config, ds *Datasets) (spec model.Spec, note string, err error) {
	resolve := func() (model.Spec, error) {
		spec, err := cfg.ModelSpec()
		ch, size, _ := ds.Train.Shape()
		return spec.Resolve(ch, size, len(ds.Classes)), err
	}
	if spec, err = resolve(); err != nil {
		return spec, "", err
	}
	if _, size := spec.Input(); size == 0 {
		return spec, "", fmt.Errorf("model %s takes its image size from the data, but the images of data.dataset = %s differ in size: set --img-size N (model.img_size), such as 32 for a ResNet-20 to -110 or 224 for a ResNet-18 to -152", spec.Name(), cfg.Data.Dataset)
	}
	m := &cfg.Model
	channels, _ := spec.Input()
	dataChannels, _, _ := ds.Train.Shape()
	var taken []string
	if m.Channels == 0 && channels != dataChannels {
		m.Channels = dataChannels
		taken = append(taken, fmt.Sprintf("model.in_chans = %d (the model's %d)", dataChannels, channels))
	}
	if classes := len(ds.Classes); m.NumClasses == 0 && spec.NumClasses() != classes {
		m.NumClasses = classes
		taken = append(taken, fmt.Sprintf("model.num_classes = %d (the model's %d)", classes, spec.NumClasses()))
	}
	if len(taken) == 0 {
		return spec, "", nil
	}
	note = strings.Join(taken, ", ") + ", from the data"
	spec, err = resolve()
	return spec, note, err
}

// openCheckpoint loads the checkpoint a resumed run continues from, after
// checking that this configuration can continue it; a new run refuses a
// run folder that already holds one.
func (s *setup) openCheckpoint() error {
	t := s.t
	path := filepath.Join(t.opts.Dir, LastCheckpoint)
	if !t.opts.Resume {
		if _, err := os.Stat(path); err == nil {
			return fmt.Errorf("run folder %s already holds a checkpoint: use --resume, or another --out", t.opts.Dir)
		}
		return nil
	}
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return fmt.Errorf("resume: %s does not exist: the run in %s stopped before its first checkpoint (or never started); start it again without --resume", path, t.opts.Dir)
	}
	ck, err := LoadCheckpoint(path)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if ck.State.Epoch >= t.cfg.Epochs && ck.State.Batch == 0 {
		return s.finishedError(ck.State)
	}
	if have, want := ck.Spec, t.net.Spec(); have != want {
		return fmt.Errorf("resume from %s: the checkpoint's model (%+v) differs from the configured one (%+v); resume with the run's config.yaml", path, have, want)
	}
	if a := t.cfg.Optim.AccumSteps; ck.State.Batch%a != 0 {
		return fmt.Errorf("resume from %s: the checkpoint is at batch %d of epoch %d, inside an accumulation group of optim.accum_steps = %d; resume with the run's own config.yaml", path, ck.State.Batch, ck.State.Epoch+1, a)
	}
	s.ck = ck
	return nil
}

// finishedError refuses to resume a run that has trained all its epochs,
// giving its results: the last evaluation's (from the epochs log) and the
// best.
func (s *setup) finishedError(st checkpoint.State) error {
	t := s.t
	last := ""
	if recs, err := metrics.Read(t.opts.Dir, "epochs"); err == nil && len(recs) > 0 {
		if r := recs[len(recs)-1]; int(r["epoch"]) == st.Epoch {
			last = fmt.Sprintf("last top-1 %.2f%% (top-5 %.2f%%), ", r["val_top1"], r["val_top5"])
		}
	}
	best := filepath.Join(t.opts.Dir, BestCheckpoint)
	return fmt.Errorf("resume: the run in %s is finished: it trained all %s (epochs = %d); %sbest top-1 %.2f%% at epoch %d (%s). "+
		"Nothing to resume: evaluate it with vit-train eval --checkpoint %s, or train it longer with --resume --set epochs=N, N > %d",
		t.opts.Dir, plural(st.Epoch, "epoch"), t.cfg.Epochs, last, st.BestTop1, st.BestEpoch, best, best, st.Epoch)
}

// openTeacher opens the distillation teacher (see openTeacher in
// teacher.go); nil without distillation.
func (s *setup) openTeacher() error {
	var err error
	s.t.teacher, err = openTeacher(s.t.cfg, s.t.net, s.t.ds)
	return err
}

// prepareDir creates the run folder (rank 0) and deletes the temporary
// files of atomic writes that a killed run left in it (a checkpoint half
// written, say): no other process writes there while this run holds it.
func (s *setup) prepareDir() error {
	t := s.t
	if !t.lead() {
		return nil
	}
	if err := os.MkdirAll(t.opts.Dir, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(t.opts.Dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type().IsRegular() && atomicfile.IsTemp(e.Name()) {
			p := filepath.Join(t.opts.Dir, e.Name())
			if err := os.Remove(p); err != nil {
				return err
			}
			fmt.Fprintf(t.opts.Out, "note: removed %s, left by a run stopped while writing it\n", p)
		}
	}
	return nil
}

// buildSource opens the training micro-batches (with the teacher's
// logits) and checks that an epoch holds an optimiser step.
func (s *setup) buildSource() error {
	t := s.t
	var err error
	if t.batches, err = NewBatchSource(t.cfg, t.ds, t.net.Spec(), t.teacher, t.comm); err != nil {
		return err
	}
	return s.checkAccumulation()
}

// checkAccumulation reports an epoch too short for one optimiser step and
// notes the batches of each epoch that no optimiser step uses.
func (s *setup) checkAccumulation() error {
	t := s.t
	nb, bs, accum := t.batches.NumBatches(), t.cfg.Data.BatchSize, t.cfg.Optim.AccumSteps
	if nb < accum {
		return fmt.Errorf("config: optim.accum_steps = %d: an epoch has only %d batches of data.batch_size = %d (%d training images), too few for one optimiser step", accum, nb, bs, t.ds.Train.Len())
	}
	if r := nb % accum; r != 0 {
		fmt.Fprintf(t.opts.Out, "note: the last %d of the %d batches of each epoch are not used (optim.accum_steps = %d)\n", r, nb, accum)
	}
	return nil
}

// buildStep creates the optimiser step, which calls Hooks.At after each
// micro-batch.
func (s *setup) buildStep() error {
	t := s.t
	var err error
	if t.step, err = NewStepper(t.cfg, t.net, t.comm, t.stepsPerEpoch()); err != nil {
		return err
	}
	if t.opts.Hooks.At != nil {
		t.step.OnMicroBatch = func(checkpoint.State) { t.at(AfterMicroBatch) }
	}
	return nil
}

// buildEvaluator creates the evaluation loader and graphs: the model's
// and, with EMA, the EMA weights'.
func (s *setup) buildEvaluator() error {
	t := s.t
	e := &evaluator{comm: t.comm, hook: t.opts.Hooks.Evaluate}
	var err error
	if e.loader, err = newEvalLoader(t.cfg, t.ds, t.net.Spec(), t.comm); err != nil {
		return err
	}
	if t.comm.Size() > 1 {
		e.buffers = bufferData(t.net, t.step.Params())
	}
	batch := t.cfg.Data.EvalBatchSize
	if e.model, err = t.net.Graph(batch, false, nil); err != nil {
		return err
	}
	emaNet, err := t.step.EMANetwork()
	if err != nil {
		return err
	}
	if emaNet != nil {
		if e.ema, err = emaNet.Graph(batch, false, nil); err != nil {
			return err
		}
	}
	t.eval = e
	return nil
}

// newEvalLoader is the evaluation loader of cfg over ds.Eval for a model
// of spec, rank c.Rank()'s share of it: in order, every image, in batches
// of data.eval_batch_size.
func newEvalLoader(cfg Config, ds *Datasets, spec model.Spec, c comm.Communicator) (*data.Loader, error) {
	_, size := spec.Input()
	_, evalP, err := Pipelines(cfg.Aug, size, ds.Mean, ds.Std)
	if err != nil {
		return nil, err
	}
	return data.NewLoader(data.LoaderConfig{Dataset: ds.Eval, BatchSize: cfg.Data.EvalBatchSize,
		Seed: cfg.Seed, Workers: cfg.Data.Workers, Pipeline: evalP, Rank: c.Rank(), Replicas: c.Size(), UnevenShards: true})
}

// loadWeights restores a resumed run's weights, optimiser state, EMA and
// position from its checkpoint, or initialises a new run's weights from
// init.from.
func (s *setup) loadWeights() error {
	t := s.t
	switch {
	case s.ck != nil:
		if err := s.restore(); err != nil {
			return fmt.Errorf("resume from %s: %w", filepath.Join(t.opts.Dir, LastCheckpoint), err)
		}
	case t.cfg.Init.From != "":
		return s.initFrom(t.cfg.Init)
	}
	return nil
}

// restore loads weights, optimiser state, EMA and position from s.ck.
func (s *setup) restore() error {
	t, ck := s.t, s.ck
	if _, err := ck.LoadWeights(t.net, false); err != nil {
		return err
	}
	if err := t.step.LoadState(ck.Optim, ck.EMA); err != nil {
		return err
	}
	t.state = ck.State
	saved := ck.State
	t.saved = &saved
	return nil
}

// initFrom loads a checkpoint's weights to fine-tune from: a network of
// the same architecture, whatever its input size (a ViT's pos_embed is
// resampled) and class count (new heads).
func (s *setup) initFrom(ic InitConfig) error {
	t := s.t
	ck, err := LoadCheckpoint(ic.From)
	if err != nil {
		return err
	}
	fromClasses := ck.Spec.NumClasses()
	newHead := fromClasses != t.net.Spec().NumClasses()
	src := &ck.File
	if ic.EMA {
		if src, err = ck.EMAWeights(); err != nil {
			return err
		}
	}
	note, err := src.LoadWeights(t.net, newHead)
	if err != nil {
		return fmt.Errorf("init.from %s: %w", ic.From, err)
	}
	fmt.Fprintf(t.opts.Out, "initialised from %s\n", ic.From)
	if note != "" {
		fmt.Fprintf(t.opts.Out, "  %s\n", note)
	}
	if newHead {
		fmt.Fprintf(t.opts.Out, "  new head for %d classes (the checkpoint has %d)\n", t.net.Spec().NumClasses(), fromClasses)
	}
	if ic.FreezeBackbone {
		fmt.Fprintf(t.opts.Out, "  backbone frozen: training %d of %d tensors\n", len(t.step.Trained()), len(t.step.Params()))
	}
	return nil
}

// syncReplicas gives every rank rank 0's weights (distributed.go).
func (s *setup) syncReplicas() error { return syncReplicas(s.t.comm, s.t.step.Params()) }

// writeRunFiles saves, on rank 0, the resolved configuration as
// config.yaml (atomically) with the held-out validation split, if any
// (HeldOutFile), and opens the run's logs: afresh, or cut back to a
// resumed run's position.
func (s *setup) writeRunFiles() error {
	t := s.t
	if !t.lead() {
		t.rec = newRecorder(t.cfg, t.opts, false)
		return nil
	}
	y, err := t.cfg.YAML()
	if err != nil {
		return err
	}
	if err := t.ds.writeHeldOut(t.cfg.Data, t.opts.Dir); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(t.opts.Dir, "config.yaml"), func(w io.Writer) error {
		_, err := w.Write(y)
		return err
	}); err != nil {
		return err
	}
	t.rec = newRecorder(t.cfg, t.opts, true)
	return t.rec.open(t.state, s.ck != nil)
}

// adaptReplicas converts the position of a checkpoint written by a job of
// another size to this job's batches and steps: the images already trained
// in the current epoch stay trained, and the step counter becomes the
// steps this job takes to reach that position, so the learning-rate
// schedule continues at the same fraction of training.
func (s *setup) adaptReplicas() error {
	t := s.t
	if s.ck == nil {
		return nil
	}
	old, n := max(1, t.state.Replicas), t.comm.Size()
	if old == n {
		return nil
	}
	b, accum := t.cfg.Data.BatchSize, t.cfg.Optim.AccumSteps
	images := t.state.Batch * b * old // images of the current epoch already trained
	if images%(b*n*accum) != 0 {
		return fmt.Errorf("resume: the checkpoint was written by a job of %d processes at batch %d of epoch %d (%d images into the epoch), which is not a whole number of optimiser steps of %d processes × data.batch_size %d × optim.accum_steps %d; resume with %d processes, or from a checkpoint at an epoch boundary",
			old, t.state.Batch, t.state.Epoch+1, images, n, b, accum, old)
	}
	st := t.state
	t.state.Batch = images / (b * n)
	t.state.Step = t.state.Epoch*t.stepsPerEpoch() + t.state.Batch/accum
	t.state.Replicas = t.replicas()
	fmt.Fprintf(t.opts.Out, "note: the checkpoint was written by %d process(es), this job has %d: global batch %d → %d images; position epoch %d, batch %d, step %d becomes batch %d, step %d (%d steps per epoch)\n",
		old, n, b*old*accum, b*n*accum, st.Epoch+1, st.Batch, st.Step, t.state.Batch, t.state.Step, t.stepsPerEpoch())
	saved := t.state
	t.saved = &saved
	return nil
}
