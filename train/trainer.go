package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/vit-train/vit-train/comm"
	"github.com/vit-train/vit-train/distill"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// ErrInterrupted is returned by Run when its context is cancelled (Ctrl-C,
// SIGTERM) or a Hook stops it: a checkpoint of the exact position was
// saved first.
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
	// Hooks let a program that embeds Run follow and steer the loop
	// (hooks.go); the zero value leaves the run as it is.
	Hooks Hooks
}

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

// trainer is one run in progress, as setup (setup.go) built it: the loop
// (loop.go) takes the optimiser step's steps on the batch source's
// micro-batches, evaluates each epoch, checkpoints the position and has
// the recorder report it.
type trainer struct {
	cfg       Config
	opts      Options
	comm      comm.Communicator
	ds        *Datasets       // the data: its classes and normalisation go into checkpoints
	net       model.Network   // the network the step trains
	teacher   distill.Teacher // nil unless distilling; the batch source fills its logits
	batches   *BatchSource    // the training micro-batches
	step      *Stepper        // the optimiser step
	eval      *evaluator      // the end-of-epoch evaluation
	rec       *recorder       // logs, events, progress bar and printed lines
	state     checkpoint.State
	saved     *checkpoint.State // the position of last.safetensors; nil until one exists
	stopAsked bool              // a Hook asked to stop at the next step boundary
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

// close stops the loaders' workers and closes the run's files; it undoes
// a set-up that failed half-way too.
func (t *trainer) close() {
	if t.batches != nil {
		t.batches.Close()
	}
	if t.rec != nil {
		t.rec.close()
	}
}

// stepsPerEpoch is the number of optimiser steps in an epoch (at least
// one: setup refuses shorter epochs).
func (t *trainer) stepsPerEpoch() int {
	return max(1, t.batches.NumBatches()/t.cfg.Optim.AccumSteps)
}

// at calls Hooks.At at point p; a stop it asks for is kept until the next
// step boundary.
func (t *trainer) at(p LoopPoint) {
	if h := t.opts.Hooks.At; h != nil && h(p, t.state) {
		t.stopAsked = true
	}
}

// checkpoint returns the run's current checkpoint.
func (t *trainer) checkpoint() *Checkpoint {
	cfg := t.cfg
	eval := runPreprocessing(cfg.Aug)
	optimState, emaState := t.step.StateTensors()
	return &Checkpoint{Config: &cfg, File: checkpoint.File{State: t.state, Mean: t.ds.Mean, Std: t.ds.Std, Eval: &eval, Classes: t.ds.Classes,
		Spec: t.net.Spec(), Params: t.net.Tensors(), Optim: optimState, EMA: emaState}}
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
	if err := t.rec.sync(); err != nil {
		return err
	}
	if err := t.save(LastCheckpoint); err != nil {
		return err
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
