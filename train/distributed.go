package train

import (
	"context"
	"fmt"

	"github.com/vit-train/vit-train/comm"
)

// Data-parallel training. A job of N processes (Options.Comm) trains one
// model as DistributedDataParallel does:
//
//   - every rank builds the same model; rank 0's weights (its
//     initialisation, or the init.from or resume checkpoint that every rank
//     loads) are broadcast to the others and verified (syncReplicas);
//   - each rank loads its share of every epoch (data.LoaderConfig Rank and
//     Replicas), so a step's N batches of data.batch_size images are the
//     batch of N·data.batch_size images one process would take;
//   - each optimiser step averages the ranks' gradients before clipping,
//     so every rank applies the same update, and sums the logged loss
//     terms (Stepper's gradAverager, step.go);
//   - the ranks agree on stopping at each step boundary (checkStop);
//   - before each evaluation, rank 0's buffers (a ResNet's batch-norm
//     running statistics, which each rank updates from its own shard) are
//     broadcast, as DDP's broadcast_buffers does, so that every rank
//     evaluates the network rank 0 checkpoints (syncBuffers);
//   - evaluations sum their counts across the ranks (evaluateAcross);
//   - rank 0 alone writes files and prints (lead).

// lead reports whether this rank writes the run's files and output.
func (t *trainer) lead() bool { return t.comm.Rank() == 0 }

// replicas is the State.Replicas value of this job: its size, or 0 for a
// single process (whose checkpoints then read as before).
func (t *trainer) replicas() int {
	if n := t.comm.Size(); n > 1 {
		return n
	}
	return 0
}

// syncReplicas gives every rank rank 0's parameters and checks that all
// ranks then hold the same bytes.
func (t *trainer) syncReplicas() error {
	if t.comm.Size() <= 1 {
		return nil
	}
	ps := make([][]float32, len(t.step.params))
	for i, p := range t.step.params {
		ps[i] = p.Data
	}
	if err := comm.BroadcastTensors(t.comm, ps, 0); err != nil {
		return fmt.Errorf("broadcasting rank 0's weights: %w", err)
	}
	if err := comm.CheckReplicas(t.comm, ps); err != nil {
		return fmt.Errorf("after broadcasting rank 0's weights: %w", err)
	}
	return nil
}

// syncBuffers gives every rank rank 0's buffers (t.buffers, found by
// buildStep). A ViT has none.
func (t *trainer) syncBuffers() error {
	if len(t.buffers) == 0 {
		return nil
	}
	if err := comm.BroadcastTensors(t.comm, t.buffers, 0); err != nil {
		return fmt.Errorf("broadcasting rank 0's batch-norm statistics: %w", err)
	}
	return nil
}

// bufferData returns the data of the tensors a checkpoint holds besides
// the parameters: a ResNet's batch-norm running statistics.
func (t *trainer) bufferData() [][]float32 {
	params := make(map[string]bool, len(t.step.params))
	for _, p := range t.step.params {
		params[p.Name] = true
	}
	var out [][]float32
	for _, b := range t.net.Tensors() {
		if !params[b.Name] {
			out = append(out, b.Data)
		}
	}
	return out
}

// agreeStop returns whether any rank wants to stop: one allreduce (max) of
// the local flag, so that every rank stops at the same step.
func (t *trainer) agreeStop(stop bool) (bool, error) {
	if t.comm.Size() <= 1 {
		return stop, nil
	}
	flag := []int64{0}
	if stop {
		flag[0] = 1
	}
	if err := t.comm.AllreduceMaxInt64(flag); err != nil {
		return false, fmt.Errorf("agreeing on a stop before step %d: %w", t.state.Step+1, err)
	}
	return flag[0] != 0, nil
}

// evalContext is the context of an evaluation: ctx for one process; for
// several, one that is never cancelled, since an evaluation is a sequence
// of collectives that every rank must finish (a stop is agreed at the next
// step boundary instead).
func (t *trainer) evalContext(ctx context.Context) context.Context {
	if t.comm.Size() > 1 {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// adaptReplicas converts the position of a checkpoint written by a job of
// another size to this job's batches and steps: the images already trained
// in the current epoch stay trained, and the step counter becomes the
// steps this job takes to reach that position, so the learning-rate
// schedule continues at the same fraction of training.
func (t *trainer) adaptReplicas() error {
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
	s := t.state
	t.state.Batch = images / (b * n)
	t.state.Step = t.state.Epoch*t.stepsPerEpoch() + t.state.Batch/accum
	t.state.Replicas = t.replicas()
	fmt.Fprintf(t.opts.Out, "note: the checkpoint was written by %d process(es), this job has %d: global batch %d → %d images; position epoch %d, batch %d, step %d becomes batch %d, step %d (%d steps per epoch)\n",
		old, n, b*old*accum, b*n*accum, s.Epoch+1, s.Batch, s.Step, t.state.Batch, t.state.Step, t.stepsPerEpoch())
	saved := t.state
	t.saved = &saved
	return nil
}
