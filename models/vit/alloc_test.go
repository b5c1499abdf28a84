package vit

import (
	"runtime"
	"testing"

	"github.com/vit-train/vit-train/internal/race"
	"github.com/vit-train/vit-train/nn/ops/opstest"
)

// TestTrainingStepAllocations checks that a training step, dropout,
// attention dropout and drop-path included, allocates nothing in
// vit-train's own ops, whether their loops run inline or on the workers:
// the only allocations left are those of Gorgonia's own ops (the Adds that
// its autodiff inserts to sum a value's gradients), at most a few each.
func TestTrainingStepAllocations(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector's sync.Pool drops items at random")
	}
	for _, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		cfg := tiny(true)
		cfg.DropRate, cfg.AttnDropRate, cfg.DropPathRate = 0.1, 0.1, 0.2
		m, err := New(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		s := lossStep(t, m, 4, true, 7)
		limit, gorgoniaOps := opstest.AllocationBudget(s.G)
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
		step()
		var before, after runtime.MemStats
		const runs = 20
		runtime.ReadMemStats(&before)
		for range runs {
			step()
		}
		runtime.ReadMemStats(&after)
		runtime.GOMAXPROCS(old)
		perStep := float64(after.Mallocs-before.Mallocs) / runs
		t.Logf("GOMAXPROCS=%d: %.1f allocations per step, %d Gorgonia ops, %d steps", procs, perStep, gorgoniaOps, s.Steps())
		if perStep > limit {
			t.Errorf("GOMAXPROCS=%d: %.1f allocations per step, more than %v for %d Gorgonia ops", procs, perStep, limit, gorgoniaOps)
		}
	}
}
