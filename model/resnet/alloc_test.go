package resnet

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops/opstest"
)

// TestStepAllocations checks that a ResNet training step and a teacher's
// forward pass allocate nothing, whether their loops run inline or on the
// workers: not in vit-train's conv, batch-norm and pooling ops, and not in
// the Adds that Gorgonia's autodiff inserts, which run as ops' own Add.
func TestStepAllocations(t *testing.T) {
	m, err := New(BuildConfig{Arch: "resnet20", Channels: 1, ImageSize: 8, NumClasses: 4}, 6)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	images := randImages(rng, tensor.Float32, 4, 1, 8, 8)
	train := newLossGraph(t, m, images, []int{0, 1, 2, 3}, true)
	eval := newLossGraph(t, m, images, []int{0, 1, 2, 3}, false)
	for _, procs := range []int{1, 2} {
		for name, lg := range map[string]*lossGraph{"training step": train, "forward pass": eval} {
			outputs := lg.grads
			if name == "forward pass" {
				outputs = nil
			}
			p := compile(t, lg.g, append(outputs, lg.logits)...)
			opstest.CheckAllocations(t, name, procs, 10, func() { run(t, p) })
		}
	}
}
