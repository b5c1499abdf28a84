package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/nn"
)

// The training loop reads top to bottom:
//
//	run                      epochs until cfg.Epochs, or a stop
//	  trainEpoch             optimiser steps until the end of the epoch
//	    checkStop            an interrupt, between optimiser steps only
//	    Stepper.Step         accum_steps micro-batches, then one update
//	                         (step.go)
//	      epochBatches.Fill  the next batch: images, targets, teacher logits
//	    logStep              steps.jsonl/csv, the event file and the progress bar
//	  finishEpoch            evaluate, record, checkpoint, report skipped files
//	  stop                   an interrupt saves a checkpoint; an error keeps the last

// run trains epoch after epoch from the current position. A cancelled ctx
// or Options.StopAfterSteps saves a checkpoint of the position and returns
// ErrInterrupted; any other error stops the run, leaving the last
// checkpoint as it was.
func (t *trainer) run(ctx context.Context) (*Summary, error) {
	start := time.Now()
	sum := &Summary{}
	t.announce()
	err := t.evaluateTeacher(ctx)
	sum.Teacher = t.teacherR
	for err == nil && t.state.Epoch < t.cfg.Epochs {
		err = t.epoch(ctx, sum)
	}
	sum.State, sum.Seconds = t.state, time.Since(start).Seconds()
	if err != nil {
		return t.stop(ctx, sum, err)
	}
	t.printSummary(sum)
	return sum, nil
}

// announce prints the run's first lines.
func (t *trainer) announce() {
	fmt.Fprintf(t.opts.Out, "%s; data %s: %d train / %d eval images; %d steps per epoch\n",
		t.net.Describe(), t.cfg.Data.Dataset, t.ds.Train.Len(), t.ds.Eval.Len(), t.stepsPerEpoch())
	if v, err := t.cfg.Model.Products(); err == nil && !v.IsFP32() {
		fmt.Fprintf(t.opts.Out, "model.precision = %s: matrix products in %s\n", t.cfg.Model.Precision, v.Describe())
	}
	if n := t.comm.Size(); n > 1 {
		b := t.cfg.Data.BatchSize
		fmt.Fprintf(t.opts.Out, "data-parallel: %d processes × data.batch_size %d = global batch %d images\n", n, b, n*b)
	}
	if t.state.Epoch > 0 || t.state.Batch > 0 {
		fmt.Fprintf(t.opts.Out, "resuming at epoch %d, batch %d (step %d)\n", t.state.Epoch+1, t.state.Batch, t.state.Step)
	}
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
	if t.stepLimitReached() && t.state.Epoch < t.cfg.Epochs {
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

// stepLimitReached reports whether Options.StopAfterSteps steps were taken.
func (t *trainer) stepLimitReached() bool {
	return t.opts.StopAfterSteps > 0 && t.state.Step >= t.opts.StopAfterSteps
}

// checkStop returns ErrInterrupted when ctx is cancelled or the step limit
// is reached, on any rank: the ranks agree, so all stop at the same step.
// The loop calls it between optimiser steps only.
func (t *trainer) checkStop(ctx context.Context) error {
	stop, err := t.agreeStop(ctx.Err() != nil || t.stepLimitReached())
	if err != nil {
		return err
	}
	if stop {
		return ErrInterrupted
	}
	return nil
}

// epochStats summarises the training of one epoch, or of its part since a
// resume.
type epochStats struct {
	loss, lr, imagesPerS, seconds float64
	// dataWait is the part of seconds the steps spent waiting for the
	// loader's batches.
	dataWait float64
}

// trainEpoch trains from the current position to the end of the epoch, one
// optimiser step at a time. Interrupts are honoured between optimiser
// steps only: an accumulation group that has begun is always finished, so
// every saved position (State.Batch) is a whole number of optimiser steps
// and the accumulated gradient never needs saving. The batches after the
// last whole step (NumBatches mod accum_steps) are not used.
func (t *trainer) trainEpoch(ctx context.Context) (epochStats, error) {
	accum := t.cfg.Optim.AccumSteps
	end := t.stepsPerEpoch() * accum // batches of the epoch that steps use
	it := t.trainL.Epoch(t.state.Epoch, t.state.Batch)
	defer it.Close()
	m := t.newMeter(end)
	src := &epochBatches{t: t, it: it}
	for t.state.Batch < end {
		if err := t.checkStop(ctx); err != nil {
			return epochStats{}, err
		}
		r, err := t.step.Step(&t.state, src)
		if err != nil {
			return epochStats{}, err
		}
		m.add(r)
		if err := t.logStep(r, m, end); err != nil {
			return epochStats{}, err
		}
		t.at(AfterStep)
	}
	st := m.finish()
	st.dataWait = it.Waited().Seconds()
	return st, nil
}

// epochBatches are the micro-batches of an epoch, from the training
// loader, as the training step takes them.
type epochBatches struct {
	t  *trainer
	it *data.Iter
}

// Fill takes the next batch and writes it into in (see fillInputs). The
// batch goes back to the loader before Fill returns.
func (e *epochBatches) Fill(in Inputs) (int, error) {
	t := e.t
	if !e.it.Next() {
		if err := e.it.Err(); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("data: epoch %d ended at batch %d, before its last optimiser step", t.state.Epoch+1, t.state.Batch)
	}
	b := e.it.Batch()
	n := b.N
	err := fillInputs(b, in, t.mix, t.cfg.Aug.Smoothing, t.teacher)
	b.Release()
	return n, err
}

// logStep writes every log_every-th step, and the run's last, to the steps
// log and updates the progress bar.
func (t *trainer) logStep(r StepResult, m *meter, end int) error {
	m.show(t, r)
	last := t.state.Epoch == t.cfg.Epochs-1 && t.state.Batch >= end
	if t.stepsLog == nil || t.cfg.LogEvery <= 0 || (t.state.Step%t.cfg.LogEvery != 0 && !last) {
		return nil
	}
	rec := []metrics.Field{{Name: "step", Value: float64(t.state.Step)}, {Name: "epoch", Value: float64(t.state.Epoch) + float64(t.state.Batch)/float64(end)},
		{Name: "loss", Value: r.Loss}, {Name: "lr", Value: r.LR}, {Name: "grad_norm", Value: r.GradNorm}, {Name: "images_per_s", Value: m.imagesPerS()}}
	for i, name := range t.step.LossNames() {
		rec = append(rec, metrics.Field{Name: name, Value: r.Extra[i]})
	}
	if err := t.stepsLog.Write(rec); err != nil {
		return err
	}
	return t.events.write("steps", "step", rec)
}

// at calls Options.At.
func (t *trainer) at(p LoopPoint) {
	if t.opts.At != nil {
		t.opts.At(p, t.state)
	}
}

// meter follows the part of an epoch a process trains: the mean loss, the
// throughput and the progress bar.
type meter struct {
	start         time.Time
	bar           *progressbar.ProgressBar
	lossSum, lr   float64
	steps, images int
}

// newMeter starts a meter for an epoch of end batches at the current
// position.
func (t *trainer) newMeter(end int) *meter {
	m := &meter{start: time.Now(), lr: math.NaN()}
	if t.cfg.Progress && !t.opts.NoProgressBar && t.lead() {
		m.bar = progressbar.NewOptions(end, progressbar.OptionSetWriter(t.opts.Out), progressbar.OptionSetWidth(24),
			progressbar.OptionShowCount(), progressbar.OptionSetDescription(fmt.Sprintf("epoch %d/%d", t.state.Epoch+1, t.cfg.Epochs)),
			progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(200*time.Millisecond))
		_ = m.bar.Set(t.state.Batch)
	}
	return m
}

func (m *meter) add(r StepResult) {
	m.lossSum += r.Loss
	m.steps++
	m.images += r.Images
	m.lr = r.LR
}

func (m *meter) imagesPerS() float64 { return float64(m.images) / time.Since(m.start).Seconds() }

// show updates the progress bar after a step.
func (m *meter) show(t *trainer, r StepResult) {
	if m.bar == nil {
		return
	}
	m.bar.Describe(fmt.Sprintf("epoch %d/%d loss %.4f lr %.2e %.0f img/s", t.state.Epoch+1, t.cfg.Epochs, r.Loss, r.LR, m.imagesPerS()))
	_ = m.bar.Set(t.state.Batch)
}

// finish closes the progress bar and summarises the steps taken; the loss
// and throughput are NaN when none was (a run resumed after its epoch's
// last step).
func (m *meter) finish() epochStats {
	if m.bar != nil {
		_ = m.bar.Finish()
	}
	sec := time.Since(m.start).Seconds()
	st := epochStats{loss: math.NaN(), lr: m.lr, imagesPerS: math.NaN(), seconds: sec}
	if m.steps > 0 {
		st.loss, st.imagesPerS = m.lossSum/float64(m.steps), float64(m.images)/sec
	}
	return st
}

// finishEpoch evaluates the model (and its EMA) at the end of an epoch,
// then records the epoch, writes the reports and saves the checkpoints.
// An interrupt during the evaluation leaves the epoch unfinished (a resumed
// run evaluates again).
func (t *trainer) finishEpoch(ctx context.Context, stats epochStats, sum *Summary) error {
	t.at(BeforeEvaluate)
	ev, ema, err := t.evaluateEpoch(ctx)
	if err != nil {
		return err
	}
	t.state.Epoch++
	t.state.Batch = 0
	improved := t.state.BestEpoch == 0 || ev.Top1 > t.state.BestTop1
	if improved {
		t.state.BestTop1, t.state.BestEpoch = ev.Top1, t.state.Epoch
	}
	if err := t.recordEpoch(stats, ev, ema); err != nil {
		return err
	}
	t.afterEpoch()
	if t.lead() {
		if err := ev.WriteReport(t.opts.Dir, "eval_", t.ds.Classes); err != nil {
			return err
		}
	}
	if err := t.saveEpochCheckpoints(improved); err != nil {
		return err
	}
	t.printEpoch(stats, ev, ema)
	if err := t.reportSkipped(); err != nil {
		return err
	}
	sum.Last, sum.EMA = ev, ema
	return nil
}

// evaluateEpoch scores the model and, with EMA, the EMA weights.
func (t *trainer) evaluateEpoch(ctx context.Context) (Evaluation, *Result, error) {
	ctx = t.evalContext(ctx)
	if err := t.syncBuffers(); err != nil {
		return Evaluation{}, nil, err
	}
	ev, err := t.evaluate(ctx, t.eval)
	if err != nil || t.emaEval == nil {
		return ev, nil, err
	}
	er, err := t.evaluate(ctx, t.emaEval)
	if err != nil {
		return ev, nil, err
	}
	return ev, &er.Result, nil
}

// evaluate scores g on the evaluation data: Options.Evaluate when set,
// else Evaluate over each rank's share summed across the ranks.
func (t *trainer) evaluate(ctx context.Context, g *nn.Graph) (Evaluation, error) {
	if t.opts.Evaluate != nil {
		return t.opts.Evaluate(ctx, g, t.evalL)
	}
	return evaluateAcross(ctx, t.comm, g, t.evalL)
}

// recordEpoch appends the epoch's record to the epochs log.
func (t *trainer) recordEpoch(stats epochStats, ev Evaluation, ema *Result) error {
	if t.epochLog == nil {
		return nil
	}
	emaTop1 := math.NaN()
	if ema != nil {
		emaTop1 = ema.Top1
	}
	rec := []metrics.Field{{Name: "epoch", Value: float64(t.state.Epoch)}, {Name: "step", Value: float64(t.state.Step)},
		{Name: "train_loss", Value: stats.loss}, {Name: "val_loss", Value: ev.Loss}, {Name: "val_top1", Value: ev.Top1}, {Name: "val_top5", Value: ev.Top5},
		{Name: "ema_top1", Value: emaTop1}, {Name: "lr", Value: stats.lr}, {Name: "images_per_s", Value: stats.imagesPerS}, {Name: "epoch_seconds", Value: stats.seconds}}
	if t.teacher != nil {
		rec = append(rec, metrics.Field{Name: "val_top1_cls", Value: ev.ClassHead.Top1}, metrics.Field{Name: "val_top1_dist", Value: ev.DistHead.Top1}, metrics.Field{Name: "teacher_top1", Value: t.teacherTop1()})
	}
	if err := t.epochLog.Write(rec); err != nil {
		return err
	}
	return t.events.write("epochs", "epoch", rec)
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

// printEpoch prints the epoch's summary line.
func (t *trainer) printEpoch(stats epochStats, ev Evaluation, ema *Result) {
	line := fmt.Sprintf("epoch %d/%d  train loss %.4f  val loss %.4f  top-1 %.2f%%  top-5 %.2f%%  lr %.3g  %.0f img/s  %.1f s (%.1f s, %.1f%%, waiting for data)",
		t.state.Epoch, t.cfg.Epochs, stats.loss, ev.Loss, ev.Top1, ev.Top5, stats.lr, stats.imagesPerS, stats.seconds, stats.dataWait, 100*stats.dataWait/stats.seconds)
	if ema != nil {
		line += fmt.Sprintf("  EMA top-1 %.2f%%", ema.Top1)
	}
	if ev.ClassHead != nil {
		line += fmt.Sprintf("  (class head %.2f%%, dist head %.2f%%)", ev.ClassHead.Top1, ev.DistHead.Top1)
	}
	if t.teacherR != nil {
		line += fmt.Sprintf("  teacher %.2f%%", t.teacherR.Top1)
	}
	fmt.Fprintln(t.opts.Out, line)
}

// printSummary prints the result of a finished run.
func (t *trainer) printSummary(sum *Summary) {
	out := t.opts.Out
	fmt.Fprintf(out, "test accuracy %.2f%% (top-5 %.2f%%, best %.2f%% at epoch %d) after %s, %.0f s; run folder %s\n",
		sum.Last.Top1, sum.Last.Top5, t.state.BestTop1, t.state.BestEpoch, plural(t.cfg.Epochs, "epoch"), sum.Seconds, t.opts.Dir)
	if h := sum.Last.ClassHead; h != nil {
		line := fmt.Sprintf("class head %.2f%%, distillation head %.2f%%, average %.2f%%", h.Top1, sum.Last.DistHead.Top1, sum.Last.Top1)
		if t.teacherR != nil {
			line += fmt.Sprintf("; teacher %.2f%%", t.teacherR.Top1)
		}
		fmt.Fprintln(out, line)
	}
}
