package optim

import (
	"math/rand/v2"
	"testing"
)

// TestHotPathsDoNotAllocate checks that after the first call, Step, Clip,
// Add and Update allocate nothing, on a model spanning several work units
// (so the worker pool is used).
func TestHotPathsDoNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	params := bigParams(rng)
	grads := randomGrads(rng, params, 1e-3)
	adamw, err := NewAdamW(params, WeightDecayGroups(params, 0.05, vitNoDecayNames), DefaultAdamWConfig())
	if err != nil {
		t.Fatal(err)
	}
	sgd, err := NewSGD(params, nil, DefaultSGDConfig())
	if err != nil {
		t.Fatal(err)
	}
	clip, err := NewClipper(params)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := NewAccumulator(params)
	if err != nil {
		t.Fatal(err)
	}
	ema, err := NewEMA(params, DefaultEMADecay)
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(){
		"AdamW.Step": func() { _ = adamw.Step(1e-4, grads) },
		"SGD.Step":   func() { _ = sgd.Step(1e-4, grads) },
		"Clip":       func() { _, _ = clip.Clip(grads, 1e-9) },
		"Accumulate": func() { acc.Reset(); _ = acc.Add(grads, 1); _ = acc.Add(grads, 1); _, _ = acc.Mean() },
		"EMA.Update": ema.Update,
	} {
		f() // the first call may start the worker pool
		if n := testing.AllocsPerRun(20, f); n != 0 {
			t.Errorf("%s: %g allocations per call, want 0", name, n)
		}
	}
}
