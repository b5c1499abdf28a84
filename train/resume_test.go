package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// tinyConfig is a run of 2 epochs of 6 batches of 16 embedded images,
// evaluated on 48 images, logging every step, without drop-path.
func tinyConfig(t *testing.T, sets ...string) Config {
	t.Helper()
	return smallConfig(t, append([]string{"data.train_subset=96", "data.batch_size=16", "data.eval_subset=48",
		"data.eval_batch_size=48", "model.drop_path_rate=0"}, sets...)...)
}

// stopAt interrupts a run (cancels its context, as Ctrl-C does) when the
// loop reaches point with n steps taken and batch micro-batches of the
// current epoch trained.
type stopAt struct {
	point       LoopPoint
	step, batch int
}

// runStopping runs cfg in dir, resuming when it already holds a
// checkpoint, and cancels the run's context when the loop reaches one of
// stops. It returns the state the run ended in and its error.
func runStopping(t *testing.T, cfg Config, dir string, stops ...stopAt) (checkpoint.State, error) {
	t.Helper()
	_, err := os.Stat(filepath.Join(dir, LastCheckpoint))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	at := func(p LoopPoint, st checkpoint.State) bool {
		for _, s := range stops {
			if s.point == p && s.step == st.Step && s.batch == st.Batch {
				cancel()
			}
		}
		return false
	}
	sum, err := Run(ctx, cfg, Options{Dir: dir, Resume: err == nil, Hooks: Hooks{At: at}})
	if sum == nil {
		return checkpoint.State{}, err
	}
	return sum.State, err
}

// sameCheckpoints fails unless two checkpoints hold the same state and
// bit-identical weights, optimiser state and EMA weights.
func sameCheckpoints(t *testing.T, a, b string) {
	t.Helper()
	ca, err := LoadCheckpoint(a)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := LoadCheckpoint(b)
	if err != nil {
		t.Fatal(err)
	}
	if ca.State != cb.State {
		t.Fatalf("states differ: %+v uninterrupted, %+v resumed", ca.State, cb.State)
	}
	type named struct {
		name string
		data []float32
	}
	flat := func(ck *Checkpoint) []named {
		var out []named
		for _, p := range ck.Params {
			out = append(out, named{p.Name, p.Data})
		}
		for _, p := range append(slices.Clone(ck.Optim), ck.EMA...) {
			out = append(out, named{p.Name, p.Data})
		}
		return out
	}
	fa, fb := flat(ca), flat(cb)
	if len(fa) != len(fb) {
		t.Fatalf("%d tensors uninterrupted, %d resumed", len(fa), len(fb))
	}
	for i := range fa {
		if fa[i].name != fb[i].name || !slices.Equal(fa[i].data, fb[i].data) {
			t.Fatalf("tensor %s differs after resuming (%s)", fa[i].name, fb[i].name)
		}
	}
}

// checkStepLog fails unless the steps log of dir holds steps 1..n once
// each, with the losses and learning rates of want.
func checkStepLog(t *testing.T, dir string, want []map[string]float64) {
	t.Helper()
	got := readSteps(t, dir)
	if len(got) != len(want) {
		t.Fatalf("%d step records, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i]["step"] != float64(i+1) || got[i]["loss"] != want[i]["loss"] || got[i]["lr"] != want[i]["lr"] {
			t.Fatalf("step record %d: %v, uninterrupted %v", i+1, got[i], want[i])
		}
	}
}

// resumeCase is a configuration and the interrupts of its resumed run.
type resumeCase struct {
	name  string
	sets  []string
	stops []stopAt
}

// testResume runs c uninterrupted and interrupted at each of its stops
// (resuming after each), and compares the two.
func testResume(t *testing.T, c resumeCase) {
	cfg := tinyConfig(t, c.sets...)
	full := t.TempDir()
	if _, err := Run(context.Background(), cfg, Options{Dir: full}); err != nil {
		t.Fatal(err)
	}
	split := t.TempDir()
	for _, stop := range c.stops { // one interrupt per run, resuming after each
		st, err := runStopping(t, cfg, split, stop)
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("stop %+v: want an interrupt, got %v", stop, err)
		}
		if st.Batch%cfg.Optim.AccumSteps != 0 {
			t.Fatalf("interrupt saved batch %d, inside an accumulation group of %d", st.Batch, cfg.Optim.AccumSteps)
		}
	}
	if _, err := runStopping(t, cfg, split); err != nil {
		t.Fatal(err)
	}
	sameCheckpoints(t, filepath.Join(full, LastCheckpoint), filepath.Join(split, LastCheckpoint))
	checkStepLog(t, split, readSteps(t, full))
	ea, err := metrics.Read(full, "epochs")
	if err != nil {
		t.Fatal(err)
	}
	eb, err := metrics.Read(split, "epochs")
	if err != nil {
		t.Fatal(err)
	}
	if len(ea) != cfg.Epochs || len(eb) != cfg.Epochs {
		t.Fatalf("%d and %d epoch records, want %d", len(ea), len(eb), cfg.Epochs)
	}
	for i := range ea {
		if ea[i]["val_top1"] != eb[i]["val_top1"] || ea[i]["val_loss"] != eb[i]["val_loss"] || ea[i]["epoch"] != eb[i]["epoch"] {
			t.Fatalf("epoch %d: %v uninterrupted, %v resumed", i+1, ea[i], eb[i])
		}
	}
}

// teacherCheckpoint saves a randomly initialised vit_fmnist_patch4_28 as a
// distillation teacher for the embedded Fashion-MNIST.
func teacherCheckpoint(t *testing.T) string {
	t.Helper()
	mc, err := vit.Preset("vit_fmnist_patch4_28", model.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := vit.New(mc, 7)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "teacher.safetensors")
	fmMean, fmStd := data.FashionMNISTMeanStd()
	ck := &checkpoint.File{Spec: model.SpecOf(mc), Mean: fmMean, Std: fmStd, Classes: data.FashionMNISTClasses(), Params: m.Tensors()}
	if err := ck.Save(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestResumeIsExact interrupts runs at several points (in the middle of an
// epoch, of an accumulation group, of an evaluation) and resumes them after
// each: the final weights, optimiser state and EMA weights equal those of
// an uninterrupted run bit for bit, and the logs hold each step once with
// the same losses. Each feature whose state or randomness a resume must
// restore is tested on its own and all together.
func TestResumeIsExact(t *testing.T) {
	mid := []stopAt{{AfterStep, 2, 2}, {AfterStep, 8, 2}} // steps of epoch 1 and epoch 2
	teacher := teacherCheckpoint(t)
	distill := []string{"model.name=deit_fmnist_distilled_patch4_28", "distill.type=soft", "distill.tau=2", "distill.teacher=" + teacher}
	cases := []resumeCase{
		{"accumulation", []string{"optim.accum_steps=2"}, []stopAt{ // 3 steps of 2 micro-batches per epoch
			{AfterMicroBatch, 0, 1},  // inside the first group: stops at step 1, batch 2
			{AfterMicroBatch, 1, 3},  // inside the second group
			{BeforeEvaluate, 3, 6},   // during the first evaluation
			{AfterMicroBatch, 3, 1},  // inside the first group of epoch 2
			{AfterStep, 5, 4},        // at a group boundary
			{AfterMicroBatch, 5, 5}}, // inside the last group: stops in the last evaluation
		},
		{"ema", []string{"ema.enabled=true", "ema.decay=0.9"}, mid},
		{"mixup-cutmix", []string{"aug.mixup=0.8", "aug.cutmix=1.0", "aug.smoothing=0.1"}, mid},
		{"drop-path", []string{"model.drop_path_rate=0.2"}, mid},
		{"distillation", distill, mid},
		{"all", append([]string{"optim.accum_steps=2", "ema.enabled=true", "ema.decay=0.9", "aug.mixup=0.8", "aug.cutmix=1.0",
			"model.drop_path_rate=0.2", "aug.train=padcrop-flip"}, distill...),
			[]stopAt{{AfterMicroBatch, 1, 3}, {BeforeEvaluate, 3, 6}, {AfterMicroBatch, 3, 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { testResume(t, c) })
	}
}

// An interrupt in the middle of an accumulation group finishes the group:
// the checkpoint is at the group's end, and the steps log reports each
// step's loss as the mean over its micro-batches. A Hook's stop there
// does the same as a cancelled context.
func TestInterruptFinishesTheAccumulationGroup(t *testing.T) {
	for _, byHook := range []bool{false, true} {
		t.Run(fmt.Sprintf("by-hook=%t", byHook), func(t *testing.T) { testInterruptInAGroup(t, byHook) })
	}
}

// testInterruptInAGroup stops a run at its fourth micro-batch, the first
// of the second group: by the Hook's return value, or by cancelling the
// run's context.
func testInterruptInAGroup(t *testing.T, byHook bool) {
	cfg := tinyConfig(t, "optim.accum_steps=3", "data.train_subset=144", "epochs=1") // 3 steps of 3 micro-batches
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var tr *trainer
	var losses []float64
	at := func(p LoopPoint, s checkpoint.State) bool {
		if p != AfterMicroBatch {
			return false
		}
		losses = append(losses, tr.step.loss.Step.LossValue())
		if s.Batch == 4 && !byHook {
			cancel()
		}
		return s.Batch == 4 && byHook
	}
	tr, err := newTrainer(cfg, Options{Dir: dir, Hooks: Hooks{At: at}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	sum, err := tr.run(ctx)
	if !errors.Is(err, ErrInterrupted) || sum.State.Batch != 6 || sum.State.Step != 2 {
		t.Fatalf("want an interrupt at batch 6, step 2; got %+v, %v", sum, err)
	}
	recs := readSteps(t, dir)
	if len(recs) != 2 || len(losses) != 6 {
		t.Fatalf("%d step records and %d micro-batches, want 2 and 6", len(recs), len(losses))
	}
	for k, r := range recs {
		want := losses[3*k]/3 + losses[3*k+1]/3 + losses[3*k+2]/3
		if math.Abs(r["loss"]-want) > 1e-12 {
			t.Errorf("step %d loss %v, want the mean of its micro-batches %v (%v)", k+1, r["loss"], want, losses[3*k:3*k+3])
		}
	}
	ck, err := LoadCheckpoint(filepath.Join(dir, LastCheckpoint))
	if err != nil || ck.State != sum.State {
		t.Fatalf("checkpoint %+v, %v", ck.State, err)
	}
	if n := tr.batches.loader.Outstanding(); n != 0 {
		t.Errorf("%d training batches not returned to the loader after the interrupt", n)
	}
}

// A checkpoint inside an accumulation group (as older versions wrote) is
// refused with an error naming the setting.
func TestResumeRefusesAPositionInsideAGroup(t *testing.T) {
	cfg := tinyConfig(t, "epochs=1")
	dir := t.TempDir()
	if _, err := runStopping(t, cfg, dir, stopAt{AfterStep, 3, 3}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want an interrupt, got %v", err)
	}
	cfg = tinyConfig(t, "epochs=1", "optim.accum_steps=2")
	_, err := newTrainer(cfg, Options{Dir: dir, Resume: true})
	if err == nil || !strings.Contains(err.Error(), "optim.accum_steps = 2") || !strings.Contains(err.Error(), "batch 3") {
		t.Fatalf("want an error naming the batch and optim.accum_steps, got %v", err)
	}
}

// The case: an interrupt before the first record of a log
// (log_every larger than the steps taken) left logs that a resume refused.
// Resuming, also from logs holding a lone newline (as older versions
// wrote), continues to the uninterrupted run's weights.
func TestResumeAfterAnEarlyInterrupt(t *testing.T) {
	cfg := tinyConfig(t, "log_every=50", "epochs=1")
	full := t.TempDir()
	if _, err := Run(context.Background(), cfg, Options{Dir: full}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		stop *stopAt // nil: before the first step
	}{{"before-the-first-step", nil}, {"after-a-step", &stopAt{AfterStep, 1, 1}}, {"during-evaluation", &stopAt{BeforeEvaluate, 6, 6}}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var err error
			if c.stop == nil {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				_, err = Run(ctx, cfg, Options{Dir: dir})
			} else {
				_, err = runStopping(t, cfg, dir, *c.stop)
			}
			if !errors.Is(err, ErrInterrupted) {
				t.Fatalf("want an interrupt, got %v", err)
			}
			if c.stop == nil {
				for _, f := range []string{"steps.csv", "steps.jsonl", "epochs.csv"} {
					if err := os.WriteFile(filepath.Join(dir, f), []byte("\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			var log strings.Builder
			if _, err := Run(context.Background(), cfg, Options{Dir: dir, Resume: true, Out: &log}); err != nil {
				t.Fatalf("resume: %v\n%s", err, log.String())
			}
			if c.stop == nil && !strings.Contains(log.String(), "steps.csv: dropped an empty header line") {
				t.Errorf("the resume does not report the repaired log:\n%s", log.String())
			}
			sameCheckpoints(t, filepath.Join(full, LastCheckpoint), filepath.Join(dir, LastCheckpoint))
			epochs, err := metrics.Read(dir, "epochs")
			if err != nil || len(epochs) != 1 {
				t.Fatalf("epoch records %v, %v", epochs, err)
			}
		})
	}
}

// A temporary file that a killed run left behind (a checkpoint half
// written) is removed when the run is resumed; other files stay.
func TestResumeRemovesStaleTemporaryFiles(t *testing.T) {
	cfg := tinyConfig(t, "epochs=1")
	dir := t.TempDir()
	if _, err := runStopping(t, cfg, dir, stopAt{AfterStep, 1, 1}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want an interrupt, got %v", err)
	}
	stale := filepath.Join(dir, ".last.safetensors.tmp-123456")
	other := filepath.Join(dir, "notes.txt")
	for _, p := range []string{stale, other} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var log strings.Builder
	if _, err := Run(context.Background(), cfg, Options{Dir: dir, Resume: true, Out: &log}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s is still there (%v)", stale, err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("%s was removed", other)
	}
	if !strings.Contains(log.String(), "removed "+stale) {
		t.Errorf("no note of the removal:\n%s", log.String())
	}
}
