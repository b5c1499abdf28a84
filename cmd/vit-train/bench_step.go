package main

import (
	"time"

	"github.com/vit-train/vit-train/comm"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/optim"
)

// benchTrainer runs the training steps bench times: forward, backward, the
// gradient allreduce of a job of several processes, and AdamW.
type benchTrainer struct {
	step    *nn.Step
	opt     optim.Optimizer
	reducer *comm.Reducer
	sizes   []int // elements of each parameter
	grads   [][]float32
	ready   func(i int) error // hands gradient i to the reducer (overlapped)

	allreduce time.Duration // in AllreduceMean after the backward pass
	wait      time.Duration // in Wait after an overlapped backward pass
}

// newBenchTrainer trains params with AdamW, averaging the gradients over
// the processes of cm.
func newBenchTrainer(step *nn.Step, params []optim.Param, cm comm.Communicator) (*benchTrainer, error) {
	opt, err := optim.NewAdamW(params, optim.WeightDecayGroups(params, 0.05, nil), optim.DefaultAdamWConfig())
	if err != nil {
		return nil, err
	}
	sizes := make([]int, len(params))
	for i, p := range params {
		sizes[i] = len(p.Data)
	}
	reducer, err := comm.NewReducer(cm, sizes, 0)
	if err != nil {
		return nil, err
	}
	b := &benchTrainer{step: step, opt: opt, reducer: reducer, sizes: sizes, grads: make([][]float32, len(params))}
	b.ready = func(i int) error {
		var err error
		if b.grads[i], err = b.step.Grad(i); err != nil {
			return err
		}
		return b.reducer.Ready(i)
	}
	return b, nil
}

// gradBytes is the size of the gradients a process contributes per step.
func (b *benchTrainer) gradBytes() int64 {
	n := int64(0)
	for _, s := range b.sizes {
		n += 4 * int64(s)
	}
	return n
}

// plain is one step whose gradients are averaged after the backward pass.
func (b *benchTrainer) plain() error {
	if err := b.step.Run(); err != nil {
		return err
	}
	for i := range b.grads {
		var err error
		if b.grads[i], err = b.step.Grad(i); err != nil {
			return err
		}
	}
	t := time.Now()
	if err := b.reducer.AllreduceMean(b.grads); err != nil {
		return err
	}
	b.allreduce += time.Since(t)
	return b.opt.Step(1e-4, b.grads)
}

// overlapped is one step whose gradients are averaged bucket by bucket
// while the backward pass goes on, as training does.
func (b *benchTrainer) overlapped() error {
	if err := b.reducer.Start(b.grads); err != nil {
		return err
	}
	err := b.step.RunReportingGrads(b.ready)
	t := time.Now()
	if werr := b.reducer.Wait(); err == nil {
		err = werr
	}
	b.wait += time.Since(t)
	if err != nil {
		return err
	}
	return b.opt.Step(1e-4, b.grads)
}

// timeSteps runs step n times and returns the mean seconds per step and
// each step's milliseconds.
func timeSteps(n int, step func() error) (float64, []float64, error) {
	ms := make([]float64, n)
	start := time.Now()
	for i := range ms {
		t := time.Now()
		if err := step(); err != nil {
			return 0, nil, err
		}
		ms[i] = msSince(t)
	}
	return time.Since(start).Seconds() / float64(n), ms, nil
}
