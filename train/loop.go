package train

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// The training loop reads top to bottom; one batch goes from the disk to
// the optimiser along the indented calls, without coming back here:
//
//	run                        epochs until cfg.Epochs, or a stop
//	  trainEpoch               optimiser steps until the end of the epoch
//	    checkStop              an interrupt, between optimiser steps only
//	    Stepper.Step           accum_steps micro-batches, then one update
//	                           (step.go)
//	      BatchSource.Fill     the next batch: the loader's images, mixed,
//	                           their targets, the teacher's logits
//	                           (batches.go)
//	      Stepper.microBatch   forward and backward; the gradients read
//	      Stepper.update       averaged across the ranks (distributed.go),
//	                           clipped, the optimiser, the EMA
//	    recorder.logStep       steps.jsonl/csv, the event file and the
//	                           progress bar (recorder.go)
//	  finishEpoch              evaluate (evaluator, evaluate.go), record,
//	                           checkpoint, report skipped files
//	  stop                     an interrupt saves a checkpoint; an error
//	                           keeps the last
//
// Everything the loop uses is built before it starts, by setup
// (setup.go).

// run trains epoch after epoch from the current position. A cancelled ctx
// or a Hook's stop saves a checkpoint of the position and returns
// ErrInterrupted; any other error stops the run, leaving the last
// checkpoint as it was.
func (t *trainer) run(ctx context.Context) (*Summary, error) {
	start := time.Now()
	sum := &Summary{}
	t.rec.announce(t.net, t.ds, t.stepsPerEpoch(), t.comm.Size(), t.state)
	err := t.evaluateTeacher(ctx)
	sum.Teacher = t.rec.teacher
	for err == nil && t.state.Epoch < t.cfg.Epochs {
		err = t.epoch(ctx, sum)
	}
	sum.State, sum.Seconds = t.state, time.Since(start).Seconds()
	if err != nil {
		return t.stop(ctx, sum, err)
	}
	t.rec.printSummary(sum)
	return sum, nil
}

// epoch trains to the end of the current epoch and finishes it.
func (t *trainer) epoch(ctx context.Context, sum *Summary) error {
	stats, err := t.trainEpoch(ctx)
	if err != nil {
		return err
	}
	if err := t.finishEpoch(ctx, stats, sum); err != nil {
		return err
	}
	if t.stopAsked && t.state.Epoch < t.cfg.Epochs {
		return ErrInterrupted
	}
	return nil
}

// stop ends a run that did not finish. After an interrupt it saves the
// position (unless last.safetensors already holds it) and returns
// ErrInterrupted; any other error is returned with the checkpoint it
// leaves.
func (t *trainer) stop(ctx context.Context, sum *Summary, err error) (*Summary, error) {
	interrupted := errors.Is(err, ErrInterrupted) || (ctx.Err() != nil && errors.Is(err, ctx.Err()))
	if !interrupted {
		return nil, fmt.Errorf("%w; %s", err, t.keptNote())
	}
	if t.saved == nil || *t.saved != t.state {
		if err := t.saveLast(); err != nil {
			return nil, fmt.Errorf("saving the checkpoint after an interrupt: %w; %s", err, t.keptNote())
		}
	}
	// The other ranks wait for rank 0's checkpoint before they exit: under
	// mpirun, a rank that exits first makes it kill the rest.
	if err := t.comm.Barrier(); err != nil {
		return nil, fmt.Errorf("waiting for the checkpoint after an interrupt: %w; %s", err, t.keptNote())
	}
	fmt.Fprintf(t.opts.Out, "interrupted at epoch %d, batch %d (step %d); checkpoint saved to %s\n",
		t.state.Epoch+1, t.state.Batch, t.state.Step, filepath.Join(t.opts.Dir, LastCheckpoint))
	sum.Interrupted = true
	return sum, ErrInterrupted
}

// checkStop returns ErrInterrupted when ctx is cancelled or a Hook asked
// to stop, on any rank: the ranks agree, so all stop at the same step.
// The loop calls it between optimiser steps only.
func (t *trainer) checkStop(ctx context.Context) error {
	stop, err := t.agreeStop(ctx.Err() != nil || t.stopAsked)
	if err != nil {
		return err
	}
	if stop {
		return ErrInterrupted
	}
	return nil
}

// trainEpoch trains from the current position to the end of the epoch, one
// optimiser step at a time. Interrupts are honoured between optimiser
// steps only: an accumulation group that has begun is always finished, so
// every saved position (State.Batch) is a whole number of optimiser steps
// and the accumulated gradient never needs saving. The batches after the
// last whole step (NumBatches mod accum_steps) are not used.
func (t *trainer) trainEpoch(ctx context.Context) (epochStats, error) {
	end := t.stepsPerEpoch() * t.cfg.Optim.AccumSteps // batches of the epoch that steps use
	t.batches.Seek(t.state.Epoch, t.state.Batch)
	defer t.batches.Close()
	waited := t.batches.Waited()
	m := t.rec.newMeter(t.state, end)
	for t.state.Batch < end {
		if err := t.checkStop(ctx); err != nil {
			return epochStats{}, err
		}
		r, err := t.step.Step(&t.state, t.batches)
		if err != nil {
			return epochStats{}, err
		}
		m.add(r)
		if err := t.rec.logStep(t.state, r, t.step.LossNames(), m, end); err != nil {
			return epochStats{}, err
		}
		t.at(AfterStep)
	}
	st := m.finish()
	st.dataWait = (t.batches.Waited() - waited).Seconds()
	return st, nil
}

// finishEpoch evaluates the model (and its EMA) at the end of an epoch,
// then records the epoch, writes the reports and saves the checkpoints.
// An interrupt during the evaluation leaves the epoch unfinished (a resumed
// run evaluates again).
func (t *trainer) finishEpoch(ctx context.Context, stats epochStats, sum *Summary) error {
	t.at(BeforeEvaluate)
	ev, ema, err := t.eval.epoch(ctx)
	if err != nil {
		return err
	}
	t.state.Epoch++
	t.state.Batch = 0
	improved := t.state.BestEpoch == 0 || ev.Top1 > t.state.BestTop1
	if improved {
		t.state.BestTop1, t.state.BestEpoch = ev.Top1, t.state.Epoch
	}
	if err := t.rec.recordEpoch(t.state, stats, ev, ema); err != nil {
		return err
	}
	t.rec.afterEpoch(t.state.Epoch)
	if t.lead() {
		if err := ev.WriteReport(t.opts.Dir, "eval_", t.ds.Classes); err != nil {
			return err
		}
	}
	if err := t.saveEpochCheckpoints(improved); err != nil {
		return err
	}
	t.rec.printEpoch(t.state, stats, ev, ema)
	if err := t.rec.reportSkipped(t.ds); err != nil {
		return err
	}
	sum.Last, sum.EMA = ev, ema
	return nil
}

// saveEpochCheckpoints saves best.safetensors (when the epoch improved on
// the best top-1), epoch-NNN.safetensors (every checkpoint.every epochs)
// and, last, last.safetensors. last.safetensors is written last so that a
// run killed in between resumes from the previous epoch and writes the
// others again, identically.
func (t *trainer) saveEpochCheckpoints(improved bool) error {
	if improved {
		if err := t.save(BestCheckpoint); err != nil {
			return err
		}
	}
	if t.cfg.Ckpt.Every > 0 && t.state.Epoch%t.cfg.Ckpt.Every == 0 {
		if err := t.save(fmt.Sprintf("epoch-%03d.safetensors", t.state.Epoch)); err != nil {
			return err
		}
	}
	return t.saveLast()
}
