package resnet

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/internal/race"
	"github.com/vit-train/vit-train/nn/ops/opstest"
)

// TestStepAllocations checks that a ResNet training step and a teacher's
// forward pass allocate nothing in vit-train's conv, batch-norm and pooling
// ops, whether their loops run inline or on the workers: what is left
// comes from Gorgonia's own ops (the Adds its autodiff inserts), a few
// each.
func TestStepAllocations(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector's sync.Pool drops items at random")
	}
	m, err := New(Config{Arch: "resnet20", Channels: 1, ImageSize: 8, NumClasses: 4}, 6)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	images := randImages(rng, tensor.Float32, 4, 1, 8, 8)
	train := newLossGraph(t, m, images, []int{0, 1, 2, 3}, true)
	eval := newLossGraph(t, m, images, []int{0, 1, 2, 3}, false)
	for _, procs := range []int{1, 2} {
		for name, lg := range map[string]*lossGraph{"training step": train, "forward pass": eval} {
			old := runtime.GOMAXPROCS(procs)
			outputs := lg.grads
			if name == "forward pass" {
				outputs = nil
			}
			p := compile(t, lg.g, append(outputs, lg.logits)...)
			limit, gorgoniaOps := opstest.AllocationBudget(lg.g)
			run(t, p)
			var before, after runtime.MemStats
			const runs = 10
			runtime.ReadMemStats(&before)
			for range runs {
				run(t, p)
			}
			runtime.ReadMemStats(&after)
			runtime.GOMAXPROCS(old)
			perRun := float64(after.Mallocs-before.Mallocs) / runs
			t.Logf("%s, GOMAXPROCS=%d: %.1f allocations, %d Gorgonia ops", name, procs, perRun, gorgoniaOps)
			if perRun > limit {
				t.Errorf("%s, GOMAXPROCS=%d: %.1f allocations, more than %v for %d Gorgonia ops", name, procs, perRun, limit, gorgoniaOps)
			}
		}
	}
}
