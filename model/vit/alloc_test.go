package vit

import (
	"testing"

	"github.com/vit-train/vit-train/nn/ops/opstest"
)

// TestTrainingStepAllocations checks that a training step, dropout,
// attention dropout and drop-path included, allocates nothing, whether its
// loops run inline or on the workers: not in vit-train's ops, not for the
// scalar loss, and not in the Adds that Gorgonia's autodiff inserts to sum
// a value's gradients, which run as ops' own Add (see ops.NativeOp).
func TestTrainingStepAllocations(t *testing.T) {
	cfg := tiny(true)
	cfg.DropRate, cfg.AttnDropRate, cfg.DropPathRate = 0.1, 0.1, 0.2
	m, err := New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	s := lossStep(t, m, 4, true, 7)
	step := func() {
		if err := s.Run(); err != nil {
			t.Fatal(err)
		}
		for i := range s.Grads {
			if _, err := s.Grad(i); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, procs := range []int{1, 2} {
		opstest.CheckAllocations(t, "training step", procs, 20, step)
	}
}
