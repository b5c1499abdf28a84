package train

import (
	"math/rand/v2"
	"testing"

	"github.com/vit-train/vit-train/internal/allocs"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// heldInputs is a micro-batch written once and left in the step's inputs.
type heldInputs struct{ n, fills int }

func (h *heldInputs) Fill(Inputs) (int, error) { h.fills++; return h.n, nil }

// newTestStepper builds the step of cfg on a fresh network (in
// model.precision), its inputs random.
func newTestStepper(t *testing.T, cfg Config) *Stepper {
	t.Helper()
	spec, err := cfg.ModelSpec()
	if err != nil {
		t.Fatal(err)
	}
	net, err := NewNetwork(spec, cfg.Seed, cfg.Model)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStepper(cfg, net, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	in, rng := s.Inputs(), rand.New(rand.NewPCG(1, 2))
	for i := range in.Images {
		in.Images[i] = float32(rng.NormFloat64())
	}
	for b := range cfg.Data.BatchSize {
		in.Targets[b*in.Classes+rng.IntN(in.Classes)] = 1
	}
	return s
}

// TestStepTakesEveryMicroBatch checks the position a step advances, the
// micro-batches it takes and that the update changes the weights.
func TestStepTakesEveryMicroBatch(t *testing.T) {
	cfg := tinyConfig(t, "optim.accum_steps=3", "optim.clip_grad=1", "ema.enabled=true")
	s := newTestStepper(t, cfg)
	before := append([]float32(nil), s.Params()[0].Data...)
	pos := checkpoint.State{Epoch: 1, Batch: 3, Step: 7}
	src := &heldInputs{n: cfg.Data.BatchSize}
	r, err := s.Step(&pos, src)
	if err != nil {
		t.Fatal(err)
	}
	if pos != (checkpoint.State{Epoch: 1, Batch: 6, Step: 8}) || src.fills != 3 || r.Images != 3*cfg.Data.BatchSize {
		t.Fatalf("after one step of 3 micro-batches: position %+v, %d fills, %d images", pos, src.fills, r.Images)
	}
	if !(r.Loss > 0) || !(r.GradNorm > 0) || r.LR != s.sched.LR(7) {
		t.Fatalf("step result %+v (lr want %g)", r, s.sched.LR(7))
	}
	same := true
	for i, v := range s.Params()[0].Data {
		same = same && v == before[i]
	}
	if same {
		t.Fatalf("%s unchanged by the update", s.Params()[0].Name)
	}
}

// TestStepAllocatesNothing checks that an optimiser step with every part
// in use (accumulation, clipping, EMA) allocates nothing once warm; the
// step `vit-train bench` times is this one.
func TestStepAllocatesNothing(t *testing.T) {
	if allocs.RaceDetector {
		t.Skip("the race detector allocates")
	}
	cfg := tinyConfig(t, "optim.accum_steps=2", "optim.clip_grad=1", "ema.enabled=true", "model.drop_path_rate=0.1")
	s := newTestStepper(t, cfg)
	var pos checkpoint.State
	src := &heldInputs{n: cfg.Data.BatchSize}
	var err error
	if a := allocs.Least(0, 5, func() {
		if err == nil {
			_, err = s.Step(&pos, src)
		}
	}); a >= 0.5 {
		t.Fatalf("an optimiser step allocates %v times", a)
	}
	if err != nil {
		t.Fatal(err)
	}
}
