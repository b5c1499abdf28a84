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

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/comm"
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/distill"
	"github.com/vit-train/vit-train/formats/atomicfile"
	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// ErrInterrupted is returned by Run when its context is cancelled (Ctrl-C,
// SIGTERM) or Options.StopAfterSteps is reached: a checkpoint of the exact
// position was saved first.
var ErrInterrupted = errors.New("training interrupted; resume with --resume")

// Options says where a run writes and how it reports.
type Options struct {
	Dir    string    // run folder
	Resume bool      // continue from Dir/last.safetensors
	Out    io.Writer // summary lines and progress bars
	// NoProgressBar leaves out the progress bar whatever progress says:
	// for an Out that is no terminal (a log file), where each redraw
	// would be a line.
	NoProgressBar bool
	// StopAfterSteps stops (like an interrupt, saving a checkpoint) after
	// this many optimiser steps in total; 0 disables it.
	StopAfterSteps int
	// Comm is the data-parallel job this process is a rank of; nil is
	// comm.Local(), a single process. data.batch_size is per process: a
	// step trains on Size × data.batch_size images. Every rank runs Run
	// with the same configuration and options; rank 0 alone writes to Dir
	// and Out (the others' Out is discarded).
	Comm comm.Communicator
	// AfterEpoch, when set, runs on rank 0 after each epoch's metrics
	// are written, with Dir; the command line redraws the run's charts
	// with it. An error is printed as a warning and the run goes on.
	AfterEpoch func(dir string) error

	// Hooks for tests and for programs that embed the loop; nil leaves
	// the run as it is.

	// At, when set, is called on every rank at each point of the loop
	// (see LoopPoint) with the position reached. Cancelling the run's
	// context from it interrupts the run at the next place the loop
	// honours interrupts.
	At func(p LoopPoint, s checkpoint.State)
	// Evaluate, when set, scores the model's (and with EMA, the EMA
	// weights') evaluation graph g on the evaluation loader l in place of
	// Evaluate over each rank's share summed across the ranks.
	Evaluate func(ctx context.Context, g *nn.Graph, l *data.Loader) (Evaluation, error)
	// Records, when set, is given each metrics log the run opens on rank 0
	// ("steps", then "epochs") and returns the log the loop writes to: one
	// that also sends the records elsewhere, or fails as a full disk would.
	Records func(name string, log RecordLog) RecordLog
}

// LoopPoint names a point of the training loop, where Options.At is called.
type LoopPoint int

const (
	AfterMicroBatch LoopPoint = iota // a micro-batch's forward and backward pass ran
	AfterStep                        // an optimiser step was applied and logged
	BeforeEvaluate                   // the epoch's last step ran; evaluation starts
)

// Summary is the outcome of a run.
type Summary struct {
	State checkpoint.State
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
	ds       *Datasets
	net      model.Network
	teacher  distill.Teacher // nil unless distilling
	teacherR *Result         // the teacher's evaluation, when it has one
	step     *Stepper        // the optimiser step
	eval     *nn.Graph
	emaNet   model.Network // the network evaluating the EMA weights
	emaEval  *nn.Graph
	trainL   *data.Loader
	evalL    *data.Loader
	mix      *augment.Mixup
	state    checkpoint.State
	stepsLog RecordLog // nil until opened
	epochLog RecordLog
	events   *eventLog         // nil unless cfg.TensorBoard
	saved    *checkpoint.State // the position of last.safetensors; nil until one exists
	skipped  int               // files skipped as unreadable, as last reported
	comm     comm.Communicator
	buffers  [][]float32 // the buffers syncBuffers broadcasts (ResNet batch-norm statistics); nil for one process
}

// RecordLog is a log of metrics records, as the loop writes them: a
// metrics.Log, unless Options.Records wraps it.
type RecordLog interface {
	Write(rec []metrics.Field) error
	Sync() error
	Close() error
}

// Run trains as cfg says, writing checkpoints, metrics and reports to
// opts.Dir. Cancelling ctx saves a checkpoint and returns ErrInterrupted.
func Run(ctx context.Context, cfg Config, opts Options) (*Summary, error) {
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
	if opts.Comm == nil {
		opts.Comm = comm.Local()
	}
	if opts.Out == nil || opts.Comm.Rank() != 0 {
		opts.Out = io.Discard
	}
	t := &trainer{cfg: cfg, opts: opts, comm: opts.Comm}
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
		if ck, err = t.resumeCheckpoint(lastPath); err != nil {
			return nil, err
		}
	} else if _, err := os.Stat(lastPath); err == nil {
		return nil, fmt.Errorf("run folder %s already holds a checkpoint: use --resume, or another --out", opts.Dir)
	}
	if t.teacher, err = openTeacher(cfg, t.net, t.ds); err != nil {
		return nil, err
	}
	if t.lead() {
		if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
			return nil, err
		}
		if err := t.removeStaleTemps(); err != nil {
			return nil, err
		}
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
	if err := t.syncReplicas(); err != nil {
		return nil, err
	}
	if t.lead() {
		if err := t.writeConfig(); err != nil {
			return nil, err
		}
		if err := t.openLogs(ck != nil); err != nil {
			t.close()
			return nil, err
		}
	}
	if ck != nil {
		if err := t.adaptReplicas(); err != nil {
			t.close()
			return nil, err
		}
	}
	t.state.Replicas = t.replicas()
	return t, nil
}

// resumeCheckpoint loads the checkpoint a resumed run continues from and
// checks that this configuration can continue it.
func (t *trainer) resumeCheckpoint(path string) (*Checkpoint, error) {
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil, fmt.Errorf("resume: %s does not exist: the run in %s stopped before its first checkpoint (or never started); start it again without --resume", path, t.opts.Dir)
	}
	ck, err := LoadCheckpoint(path)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	if ck.State.Epoch >= t.cfg.Epochs && ck.State.Batch == 0 {
		return nil, t.finishedError(ck.State)
	}
	if err := t.compatible(ck); err != nil {
		return nil, fmt.Errorf("resume from %s: %w", path, err)
	}
	if a := t.cfg.Optim.AccumSteps; ck.State.Batch%a != 0 {
		return nil, fmt.Errorf("resume from %s: the checkpoint is at batch %d of epoch %d, inside an accumulation group of optim.accum_steps = %d; resume with the run's own config.yaml", path, ck.State.Batch, ck.State.Epoch+1, a)
	}
	return ck, nil
}

// finishedError refuses to resume a run that has trained all its epochs,
// giving its results: the last evaluation's (from the epochs log) and the
// best.
func (t *trainer) finishedError(s checkpoint.State) error {
	last := ""
	if recs, err := metrics.Read(t.opts.Dir, "epochs"); err == nil && len(recs) > 0 {
		if r := recs[len(recs)-1]; int(r["epoch"]) == s.Epoch {
			last = fmt.Sprintf("last top-1 %.2f%% (top-5 %.2f%%), ", r["val_top1"], r["val_top5"])
		}
	}
	return fmt.Errorf("resume: the run in %s is finished: it trained all %s (epochs = %d); %sbest top-1 %.2f%% at epoch %d (%s). "+
		"Nothing to resume: evaluate it with vit-train eval --checkpoint %s, or train it longer with --resume --set epochs=N, N > %d",
		t.opts.Dir, plural(s.Epoch, "epoch"), t.cfg.Epochs, last, s.BestTop1, s.BestEpoch, filepath.Join(t.opts.Dir, BestCheckpoint),
		filepath.Join(t.opts.Dir, BestCheckpoint), s.Epoch)
}

// plural is "1 epoch", "2 epochs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// removeStaleTemps deletes the temporary files of atomic writes that a
// killed run left in the run folder (a checkpoint half written, say): no
// other process writes there while this run holds it.
func (t *trainer) removeStaleTemps() error {
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

// writeConfig saves the resolved configuration as config.yaml, atomically,
// and the held-out validation split, if any (HeldOutFile).
func (t *trainer) writeConfig() error {
	y, err := t.cfg.YAML()
	if err != nil {
		return err
	}
	if err := t.ds.writeHeldOut(t.cfg.Data, t.opts.Dir); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(t.opts.Dir, "config.yaml"), func(w io.Writer) error {
		_, err := w.Write(y)
		return err
	})
}

// records is the log the loop writes name's records to: log, or what
// Options.Records makes of it.
func (t *trainer) records(name string, log *metrics.Log) RecordLog {
	if t.opts.Records == nil {
		return log
	}
	return t.opts.Records(name, log)
}

// openLogs opens the steps and epochs logs: afresh, or, when resuming,
// truncated to the checkpoint's position (steps up to its step, epochs up
// to its completed epochs), printing what was repaired.
func (t *trainer) openLogs(resume bool) error {
	var keepSteps, keepEpochs *metrics.Keep
	if resume {
		keepSteps = &metrics.Keep{Field: "step", Max: float64(t.state.Step)}
		keepEpochs = &metrics.Keep{Field: "epoch", Max: float64(t.state.Epoch)}
	}
	steps, err := metrics.Open(t.opts.Dir, "steps", keepSteps)
	if err != nil {
		return err
	}
	t.stepsLog = t.records("steps", steps)
	epochs, err := metrics.Open(t.opts.Dir, "epochs", keepEpochs)
	if err != nil {
		return err
	}
	t.epochLog = t.records("epochs", epochs)
	eventNotes, err := t.openEvents(resume)
	if err != nil {
		return err
	}
	for _, n := range append(append(steps.Notes, epochs.Notes...), eventNotes...) {
		fmt.Fprintf(t.opts.Out, "note: %s\n", n)
	}
	return nil
}

// openEvents cuts the run folder's event files back to the run's position
// (removes them, for a fresh run) and, with cfg.TensorBoard, starts the
// run's own event file.
func (t *trainer) openEvents(resume bool) (notes []string, err error) {
	var at *checkpoint.State
	if resume {
		at = &t.state
	}
	path, notes, err := cutEventFiles(t.opts.Dir, at)
	if err != nil || !t.cfg.TensorBoard {
		return notes, err
	}
	y, err := t.cfg.YAML()
	if err != nil {
		return nil, err
	}
	t.events, err = openEventLog(path, y, t.state.Step)
	return notes, err
}

// newNetwork creates the configured network, its unset input taken from
// the data, initialised from the seed, after checking that it takes the
// data.
func (t *trainer) newNetwork() error {
	spec, err := t.fitData()
	if err != nil {
		return err
	}
	if err := t.ds.CheckModel(spec); err != nil {
		return err
	}
	t.net, err = NewNetwork(spec, t.cfg.Seed, t.cfg.Model)
	return err
}

// fitData resolves the model's configuration against the data: unset
// inputs (a ResNet's) are the data's, and a model whose channels or class
// count model.in_chans or model.num_classes leave to its preset takes the
// data's instead, recorded in the run's configuration with a note.
func (t *trainer) fitData() (model.Spec, error) {
	resolve := func() (model.Spec, error) {
		spec, err := t.cfg.ModelSpec()
		ch, size, _ := t.ds.Train.Shape()
		return spec.Resolve(ch, size, len(t.ds.Classes)), err
	}
	spec, err := resolve()
	if err != nil {
		return spec, err
	}
	m := &t.cfg.Model
	channels, _ := spec.Input()
	dataChannels, _, _ := t.ds.Train.Shape()
	var notes []string
	if m.Channels == 0 && channels != dataChannels {
		m.Channels = dataChannels
		notes = append(notes, fmt.Sprintf("model.in_chans = %d (the model's %d)", dataChannels, channels))
	}
	if classes := len(t.ds.Classes); m.NumClasses == 0 && spec.NumClasses() != classes {
		m.NumClasses = classes
		notes = append(notes, fmt.Sprintf("model.num_classes = %d (the model's %d)", classes, spec.NumClasses()))
	}
	if len(notes) == 0 {
		return spec, nil
	}
	fmt.Fprintf(t.opts.Out, "note: %s, from the data\n", strings.Join(notes, ", "))
	return resolve()
}

// compatible reports a checkpoint whose model differs from the configured one.
func (t *trainer) compatible(ck *Checkpoint) error {
	if have, want := ck.Spec, t.net.Spec(); have != want {
		return fmt.Errorf("the checkpoint's model (%+v) differs from the configured one (%+v); resume with the run's config.yaml", have, want)
	}
	return nil
}

// build creates the loaders, the optimiser step and the evaluation graphs.
func (t *trainer) build() error {
	for _, step := range []func() error{t.buildLoaders, t.buildStep, t.buildEval} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// buildLoaders creates the training and evaluation loaders and Mixup/CutMix.
func (t *trainer) buildLoaders() error {
	cfg := t.cfg
	_, size := t.net.Spec().Input()
	trainP, evalP, err := Pipelines(cfg.Aug, size, t.ds.Mean, t.ds.Std)
	if err != nil {
		return err
	}
	rank, replicas := t.comm.Rank(), t.comm.Size()
	if t.trainL, err = newTrainLoader(cfg, t.ds.Train, trainP, rank, replicas); err != nil {
		return err
	}
	if err := t.checkBatches(); err != nil {
		return err
	}
	if t.evalL, err = data.NewLoader(data.LoaderConfig{Dataset: t.ds.Eval, BatchSize: cfg.Data.EvalBatchSize,
		Seed: cfg.Seed, Workers: cfg.Data.Workers, Pipeline: evalP, Rank: rank, Replicas: replicas, UnevenShards: true}); err != nil {
		return err
	}
	t.mix = newMixup(cfg.Aug, t.net.Spec().NumClasses())
	return nil
}

// buildStep creates the optimiser step and, in a job of several ranks,
// finds the buffers syncBuffers broadcasts.
func (t *trainer) buildStep() error {
	var err error
	if t.step, err = NewStepper(t.cfg, t.net, t.opts, t.stepsPerEpoch()); err != nil {
		return err
	}
	if t.comm.Size() > 1 {
		t.buffers = t.bufferData()
	}
	return nil
}

// buildEval creates the evaluation graphs: the model's and, with EMA, the
// EMA weights'.
func (t *trainer) buildEval() error {
	var err error
	if t.eval, err = t.net.Graph(t.cfg.Data.EvalBatchSize, false, nil); err != nil {
		return err
	}
	if t.step.ema == nil {
		return nil
	}
	if t.emaNet, err = t.net.SharingWeights(t.step.ema.Weights()); err != nil {
		return err
	}
	t.emaEval, err = t.emaNet.Graph(t.cfg.Data.EvalBatchSize, false, nil)
	return err
}

// checkBatches reports an epoch too short for one optimiser step and notes
// the batches of each epoch that no optimiser step uses.
func (t *trainer) checkBatches() error {
	nb, bs, accum := t.trainL.NumBatches(), t.cfg.Data.BatchSize, t.cfg.Optim.AccumSteps
	if nb < 1 && t.cfg.Data.RepeatedAug > 1 {
		return fmt.Errorf("config: data.repeated_aug = %d: an epoch keeps %d of the %d training images (a multiple of 256, shared by %d process(es)), fewer than data.batch_size = %d", t.cfg.Data.RepeatedAug, t.trainL.Len()*max(1, t.comm.Size()), t.ds.Train.Len(), max(1, t.comm.Size()), bs)
	}
	if nb < 1 {
		return fmt.Errorf("config: data.batch_size = %d is larger than the %d training images", bs, t.ds.Train.Len())
	}
	if nb < accum {
		return fmt.Errorf("config: optim.accum_steps = %d: an epoch has only %d batches of data.batch_size = %d (%d training images), too few for one optimiser step", accum, nb, bs, t.ds.Train.Len())
	}
	if r := nb % accum; r != 0 {
		fmt.Fprintf(t.opts.Out, "note: the last %d of the %d batches of each epoch are not used (optim.accum_steps = %d)\n", r, nb, accum)
	}
	return nil
}

// stepsPerEpoch is the number of optimiser steps in an epoch (at least
// one: checkBatches refuses shorter epochs).
func (t *trainer) stepsPerEpoch() int {
	return max(1, t.trainL.NumBatches()/t.cfg.Optim.AccumSteps)
}

// initFrom loads a checkpoint's weights to fine-tune from: a network of
// the same architecture, whatever its input size (a ViT's pos_embed is
// resampled) and class count (new heads).
func (t *trainer) initFrom(ic InitConfig) error {
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
		fmt.Fprintf(t.opts.Out, "  backbone frozen: training %d of %d tensors\n", len(t.step.trained), len(t.step.params))
	}
	return nil
}

// restore loads weights, optimiser state, EMA and position from ck.
func (t *trainer) restore(ck *Checkpoint) error {
	if _, err := ck.LoadWeights(t.net, false); err != nil {
		return err
	}
	if err := t.step.opt.LoadState(ck.Optim); err != nil {
		return err
	}
	if t.step.ema != nil {
		if len(ck.EMA) == 0 {
			return fmt.Errorf("ema.enabled is set but the checkpoint has no EMA weights")
		}
		if err := t.step.ema.LoadState(ck.EMA); err != nil {
			return err
		}
	}
	t.state = ck.State
	saved := ck.State
	t.saved = &saved
	return nil
}

func (t *trainer) close() {
	if t.stepsLog != nil {
		t.stepsLog.Close()
	}
	if t.epochLog != nil {
		t.epochLog.Close()
	}
	t.events.close()
}

// checkpoint returns the run's current checkpoint.
func (t *trainer) checkpoint() *Checkpoint {
	cfg := t.cfg
	eval := runPreprocessing(cfg.Aug)
	ck := &Checkpoint{Config: &cfg, File: checkpoint.File{State: t.state, Mean: t.ds.Mean, Std: t.ds.Std, Eval: &eval, Classes: t.ds.Classes,
		Spec: t.net.Spec(), Params: t.net.Tensors(), Optim: t.step.opt.StateTensors()}}
	if t.step.ema != nil {
		ck.EMA = t.step.ema.StateTensors()
	}
	return ck
}

// save writes the checkpoint name into the run folder (rank 0 only).
func (t *trainer) save(name string) error {
	if !t.lead() {
		return nil
	}
	return t.checkpoint().Save(filepath.Join(t.opts.Dir, name))
}

// saveLast syncs the metrics logs, then writes last.safetensors: the logs
// on disk always hold every record up to the checkpoint's position.
func (t *trainer) saveLast() error {
	if t.lead() {
		if err := t.stepsLog.Sync(); err != nil {
			return err
		}
		if err := t.epochLog.Sync(); err != nil {
			return err
		}
		if err := t.events.sync(); err != nil {
			return err
		}
		if err := t.save(LastCheckpoint); err != nil {
			return err
		}
	}
	saved := t.state
	t.saved = &saved
	return nil
}

// keptNote says which checkpoint a run that stopped on an error leaves.
func (t *trainer) keptNote() string {
	if t.saved == nil {
		return "no checkpoint was written"
	}
	s := t.saved
	return fmt.Sprintf("the last checkpoint, %s (epoch %d, batch %d, step %d), is kept", filepath.Join(t.opts.Dir, LastCheckpoint), s.Epoch+1, s.Batch, s.Step)
}

// teacherTop1 is the teacher's top-1 accuracy, NaN when unknown.
func (t *trainer) teacherTop1() float64 {
	if t.teacherR == nil {
		return math.NaN()
	}
	return t.teacherR.Top1
}

// afterEpoch runs Options.AfterEpoch (rank 0 only); a failure is a
// warning.
func (t *trainer) afterEpoch() {
	if !t.lead() || t.opts.AfterEpoch == nil {
		return
	}
	if err := t.opts.AfterEpoch(t.opts.Dir); err != nil {
		fmt.Fprintf(t.opts.Out, "warning: after epoch %d: %v\n", t.state.Epoch, err)
	}
}

// SkippedList is the run-folder file that lists the files a run with
// data.skip_corrupt skipped as unreadable.
const SkippedList = "skipped.txt"

// reportSkipped says, at the end of an epoch, which files the training
// and evaluation data skipped as unreadable (data.skip_corrupt): each
// newly skipped file with why, and the total, printed and written to
// SkippedList in the run folder (rank 0, which sees its own share of the
// training data and its share of the evaluation data).
func (t *trainer) reportSkipped() error {
	if !t.lead() {
		return nil
	}
	var report strings.Builder
	total := 0
	for _, ds := range []data.Dataset{t.ds.Train, t.ds.Eval} {
		if r, ok := data.FolderOf(ds); ok {
			report.WriteString(r.SkipReport())
			total += len(r.Skipped())
		}
	}
	if total == 0 {
		return nil
	}
	path := filepath.Join(t.opts.Dir, SkippedList)
	if total == t.skipped {
		fmt.Fprintf(t.opts.Out, "data.skip_corrupt: %d unreadable file(s) skipped so far, none new this epoch (listed in %s)\n", total, path)
		return nil
	}
	t.skipped = total
	fmt.Fprintf(t.opts.Out, "data.skip_corrupt: %d unreadable file(s) skipped so far, each replaced by the next readable file (listed in %s):\n%s", total, path, report.String())
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := io.WriteString(w, report.String())
		return err
	})
}
