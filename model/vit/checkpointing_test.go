package vit

import (
	"math"
	"testing"

	"github.com/vit-train/vit-train/nn"
)

// Recomputing each block in the backward pass gives the same loss and
// gradients, bit for bit, with dropout, attention dropout and drop-path on
// (their masks depend on the step, not on how often an op runs), and
// plans less activation memory.
func TestGradCheckpointingSameGradientsLessMemory(t *testing.T) {
	for _, distilled := range []bool{false, true} {
		c := tiny(distilled)
		c.Depth = 4
		c.DropRate, c.AttnDropRate, c.DropPathRate = 0.1, 0.1, 0.2
		m, err := New(c, 5)
		if err != nil {
			t.Fatal(err)
		}
		plain := lossStepCheckpointed(t, m, 3, true, 7, false)
		ckpt := lossStepCheckpointed(t, m, 3, true, 7, true)
		for _, s := range []*nn.Step{plain, ckpt} {
			if err := s.Run(); err != nil {
				t.Fatal(err)
			}
		}
		if a, b := plain.LossValue(), ckpt.LossValue(); a != b || math.IsNaN(a) {
			t.Errorf("distilled=%v: loss %v with checkpointing, %v without", distilled, b, a)
		}
		for i := range m.Params {
			g0, err0 := plain.Grad(i)
			g1, err1 := ckpt.Grad(i)
			if err0 != nil || err1 != nil {
				t.Fatal(err0, err1)
			}
			for j := range g0 {
				if math.Float32bits(g0[j]) != math.Float32bits(g1[j]) {
					t.Fatalf("distilled=%v: %s[%d]: gradient %v with checkpointing, %v without", distilled, m.Params[i].Name, j, g1[j], g0[j])
				}
			}
		}
		if ckpt.Steps() <= plain.Steps() {
			t.Errorf("distilled=%v: checkpointing runs %d ops per step, no more than the %d without: nothing is recomputed", distilled, ckpt.Steps(), plain.Steps())
		}
		if ckpt.BufferBytes() >= plain.BufferBytes() {
			t.Errorf("distilled=%v: checkpointing plans %d buffer bytes, not fewer than %d without", distilled, ckpt.BufferBytes(), plain.BufferBytes())
		}
		t.Logf("distilled=%v: %d → %d ops, %d → %d buffer bytes", distilled, plain.Steps(), ckpt.Steps(), plain.BufferBytes(), ckpt.BufferBytes())
	}
}
