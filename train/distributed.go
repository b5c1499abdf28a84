package train

import (
	"fmt"
	"time"

	"github.com/vit-train/vit-train/comm"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/optim"
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
//     terms (gradAverager, below, which the Stepper hands its gradients);
//   - the ranks agree on stopping at each step boundary (checkStop);
//   - before each evaluation, rank 0's buffers (a ResNet's batch-norm
//     running statistics, which each rank updates from its own shard) are
//     broadcast, as DDP's broadcast_buffers does, so that every rank
//     evaluates the network rank 0 checkpoints (evaluator.syncBuffers,
//     evaluate.go);
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

// syncReplicas gives every rank of c rank 0's parameters params and
// checks that all ranks then hold the same bytes.
func syncReplicas(c comm.Communicator, params []optim.Param) error {
	if c.Size() <= 1 {
		return nil
	}
	ps := make([][]float32, len(params))
	for i, p := range params {
		ps[i] = p.Data
	}
	if err := comm.BroadcastTensors(c, ps, 0); err != nil {
		return fmt.Errorf("broadcasting rank 0's weights: %w", err)
	}
	if err := comm.CheckReplicas(c, ps); err != nil {
		return fmt.Errorf("after broadcasting rank 0's weights: %w", err)
	}
	return nil
}

// bufferData returns the data of the tensors of net that a checkpoint
// holds besides its parameters params: a ResNet's batch-norm running
// statistics.
func bufferData(net model.Network, params []optim.Param) [][]float32 {
	isParam := make(map[string]bool, len(params))
	for _, p := range params {
		isParam[p.Name] = true
	}
	var out [][]float32
	for _, b := range net.Tensors() {
		if !isParam[b.Name] {
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

// gradAverager averages a step's gradients, losses and image counts over
// the ranks of a data-parallel job. It knows the trained parameters' sizes
// only; the Stepper hands it the gradients.
type gradAverager struct {
	comm    comm.Communicator
	reducer *comm.Reducer
	// overlap averages each step's gradients during its backward pass
	// (one micro-batch per step): the Stepper hands each gradient to the
	// reducer as soon as it is computed (start, ready, finish).
	overlap bool
	buf     []float64 // reduceLosses's buffer

	after, wait time.Duration // see Stepper.CommTime
}

// newGradAverager averages the gradients of params (their Data's sizes)
// over the ranks of c, during the backward pass when overlap is set.
func newGradAverager(c comm.Communicator, params []optim.Param, overlap bool) (*gradAverager, error) {
	sizes := make([]int, len(params))
	for i, p := range params {
		sizes[i] = len(p.Data)
	}
	reducer, err := comm.NewReducer(c, sizes, 0)
	if err != nil {
		return nil, err
	}
	return &gradAverager{comm: c, reducer: reducer, overlap: overlap}, nil
}

// start begins an overlapped averaging of grads, one slice per trained
// parameter, which the backward pass fills (see ready).
func (a *gradAverager) start(grads [][]float32) error { return a.reducer.Start(grads) }

// ready says that gradient j of those start was given is computed.
func (a *gradAverager) ready(j int) error { return a.reducer.Ready(j) }

// finish waits for the overlapped averaging of step's gradients to end
// and returns runErr, the backward pass's error, or else the averaging's.
func (a *gradAverager) finish(step int, runErr error) error {
	t := time.Now()
	if werr := a.reducer.Wait(); runErr == nil && werr != nil {
		runErr = fmt.Errorf("averaging the gradients of step %d: %w", step+1, werr)
	}
	a.wait += time.Since(t)
	return runErr
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
