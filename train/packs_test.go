package train

import (
	"math"
	"testing"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// TestKeptWeightPacksKeepTheRun checks that keeping the layers' weights
// packed from step to step, repacked by AdamW as it updates them, changes
// no bit of a mixed-precision run: its weights after some steps are those
// of the same run whose forward passes pack every weight anew (every
// packed copy marked out of date after each update, as if the optimiser
// had reported no rows).
func TestKeptWeightPacksKeepTheRun(t *testing.T) {
	if blas.Mixed().IsFP32() {
		t.Skip("no low-precision product faster than float32 on this processor: mixed precision not run")
	}
	cfg := tinyConfig(t, "model.precision=mixed", "optim.clip_grad=1", "ema.enabled=true")
	kept, fresh := newTestStepper(t, cfg), newTestStepper(t, cfg)
	packers := 0
	for _, ps := range kept.packers {
		packers += len(ps)
	}
	if packers == 0 {
		t.Fatal("no layer keeps its weight packed in a mixed-precision run with AdamW")
	}
	var posKept, posFresh checkpoint.State
	for step := range 4 {
		if _, err := kept.Step(&posKept, &heldInputs{n: cfg.Data.BatchSize}); err != nil {
			t.Fatal(err)
		}
		if _, err := fresh.Step(&posFresh, &heldInputs{n: cfg.Data.BatchSize}); err != nil {
			t.Fatal(err)
		}
		for _, ps := range fresh.packers {
			for _, p := range ps {
				p.StartRepack()
			}
		}
		for i, p := range kept.Params() {
			for j, v := range p.Data {
				if w := fresh.Params()[i].Data[j]; math.Float32bits(v) != math.Float32bits(w) {
					t.Fatalf("after step %d: %s[%d] = %v with the weights kept packed, %v packed anew", step+1, p.Name, j, v, w)
				}
			}
		}
	}
}
