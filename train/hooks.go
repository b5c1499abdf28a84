package train

import (
	"context"

	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// Hooks are the callbacks through which a program that embeds Run follows
// the training loop and steers it, as GoMLX's train.Loop.OnStep does: to
// stop a run after a budget of steps (StopAfterSteps), to interrupt it at
// a point of its own choosing, to score the model its own way, or to send
// the metrics records to another store. Each is optional, and each runs on
// every rank of a data-parallel job, in the loop's goroutine.
type Hooks struct {
	// At is called at each point of the loop (LoopPoint) with the
	// position reached.
	At Hook
	// Evaluate scores the model's (and with EMA, the EMA weights')
	// evaluation graph g, which takes batches of data.eval_batch_size
	// images (B, C, H, W), in place of Evaluate over the evaluation
	// loader l (each rank's share, summed across the ranks). Every rank
	// must return the same Evaluation: best.safetensors and the epoch's
	// record follow it.
	Evaluate func(ctx context.Context, g *nn.Graph, l *data.Loader) (Evaluation, error)
	// Records is given each metrics log the run opens on rank 0 ("steps",
	// then "epochs") and returns the log the loop writes to: one that
	// also sends the records elsewhere, say. An error of its Write or
	// Sync stops the run as a full disk does, keeping the last
	// checkpoint.
	Records func(name string, log RecordLog) RecordLog
}

// A Hook is called at point p of the training loop with the position s
// reached. Returning true stops the run at the next optimiser-step
// boundary as an interrupt does (a checkpoint of the position is saved and
// Run returns ErrInterrupted), after the evaluation when p ends an epoch;
// the ranks agree, so one rank's stop stops all at the same step.
// Cancelling the run's context from a hook stops it at the next place the
// loop honours interrupts instead: the next step boundary, or the
// evaluation under way, which is then left unfinished.
type Hook func(p LoopPoint, s checkpoint.State) (stop bool)

// LoopPoint names a point of the training loop, where Hooks.At is called.
type LoopPoint int

const (
	AfterMicroBatch LoopPoint = iota // a micro-batch's forward and backward pass ran (State.Batch counts it)
	AfterStep                        // an optimiser step was applied and logged (State.Step counts it)
	BeforeEvaluate                   // the epoch's last step ran; evaluation starts
)

// StopAfterSteps is a Hook that stops a run once it has taken n optimiser
// steps in total, counting those before a resume; for n ≤ 0 it is nil, no
// limit.
func StopAfterSteps(n int) Hook {
	if n <= 0 {
		return nil
	}
	return func(p LoopPoint, s checkpoint.State) bool { return p == AfterStep && s.Step >= n }
}

// RecordLog is a log of metrics records, as the loop writes them: a
// metrics.Log, unless Hooks.Records wraps it.
type RecordLog interface {
	Write(rec []metrics.Field) error
	Sync() error
	Close() error
}
