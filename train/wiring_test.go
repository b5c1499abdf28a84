package train

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/internal/gradcheck"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// oneStep trains cfg for one optimiser step and returns the trainer and
// every parameter's values before the step.
func oneStep(t *testing.T, cfg Config) (*trainer, [][]float32) {
	t.Helper()
	tr, err := newTrainer(cfg, Options{Dir: t.TempDir(), Hooks: Hooks{At: StopAfterSteps(1)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.close)
	before := make([][]float32, len(tr.step.Trained()))
	for j, p := range tr.step.Trained() {
		before[j] = slices.Clone(p.Data)
	}
	if _, err := tr.run(context.Background()); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want a stop after one step, got %v", err)
	}
	return tr, before
}

// plainSGD is SGD without momentum or weight decay at a constant rate:
// an update is −lr·scale·gradient.
var plainSGD = []string{"epochs=1", "optim.name=sgd", "optim.momentum=0", "optim.weight_decay=0", "optim.lr=0.1",
	"sched.name=constant", "sched.warmup_epochs=0"}

// The learning rate of each parameter is scaled by optim.layer_decay to
// the power of its distance from the head (timm's layer ids: the stem 0,
// block k k+1, the final norm depth+1, the head depth+2).
func TestLayerDecayReachesTheOptimiser(t *testing.T) {
	tr, before := oneStep(t, tinyConfig(t, append(plainSGD, "optim.layer_decay=0.5")...))
	const lr = 0.1
	want := func(name string) float64 {
		switch {
		case strings.HasPrefix(name, "blocks."):
			var k int
			fmt.Sscanf(name, "blocks.%d.", &k)
			return math.Pow(0.5, float64(6-(k+1)))
		case strings.HasPrefix(name, "norm."):
			return 0.5
		case strings.HasPrefix(name, "head."):
			return 1
		}
		return math.Pow(0.5, 6) // cls_token, pos_embed, patch_embed
	}
	for j, p := range tr.step.Trained() {
		var dg, gg float64
		for i, g := range tr.step.grads[j] {
			dg += float64(before[j][i]-p.Data[i]) * float64(g)
			gg += float64(g) * float64(g)
		}
		if gg == 0 {
			continue
		}
		if scale := dg / (lr * gg); math.Abs(scale/want(p.Name)-1) > 0.02 {
			t.Errorf("%s: learning-rate scale %.4g, want %.4g", p.Name, scale, want(p.Name))
		}
	}
}

// optim.clip_grad bounds the global norm of the update; steps.jsonl logs
// the norm before clipping.
func TestClipGradReachesTheOptimiser(t *testing.T) {
	for _, clip := range []float64{0, 1e-3} {
		tr, before := oneStep(t, tinyConfig(t, append(plainSGD, fmt.Sprintf("optim.clip_grad=%g", clip))...))
		var sq float64
		for j, p := range tr.step.Trained() {
			for i := range p.Data {
				d := float64(before[j][i] - p.Data[i])
				sq += d * d
			}
		}
		update := math.Sqrt(sq) / 0.1
		logged := readSteps(t, tr.opts.Dir)[0]["grad_norm"]
		want := logged
		if clip > 0 {
			want = clip
			if logged < 10*clip {
				t.Fatalf("gradient norm %v: too small to show clipping at %v", logged, clip)
			}
		}
		if math.Abs(update/want-1) > 0.01 {
			t.Errorf("clip_grad=%v: update norm/lr %.5g, want %.5g (logged gradient norm %.5g)", clip, update, want, logged)
		}
	}
}

// optim.scale_lr multiplies lr by the global batch (batch × accum_steps) / 512.
func TestScaleLR(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want float64
	}{
		{nil, 4e-3},
		{[]string{"optim.scale_lr=true"}, 4e-3 * 16 / 512},
		{[]string{"optim.scale_lr=true", "optim.accum_steps=2"}, 4e-3 * 32 / 512},
	} {
		cfg := tinyConfig(t, append([]string{"epochs=1", "optim.lr=4e-3", "sched.name=constant", "sched.warmup_epochs=0"}, c.sets...)...)
		dir := t.TempDir()
		if _, err := Run(context.Background(), cfg, Options{Dir: dir, Hooks: Hooks{At: StopAfterSteps(1)}}); !errors.Is(err, ErrInterrupted) {
			t.Fatal(err)
		}
		if lr := readSteps(t, dir)[0]["lr"]; math.Abs(lr/c.want-1) > 1e-12 {
			t.Errorf("%v: lr %v, want %v", c.sets, lr, c.want)
		}
	}
}

// best.safetensors is the epoch of the highest validation top-1 (the
// first of equals); checkpoint.every keeps epoch-NNN files of every
// N-th epoch only.
func TestBestAndPeriodicCheckpoints(t *testing.T) {
	cfg := tinyConfig(t, "epochs=4", "checkpoint.every=2", "data.train_subset=32")
	dir := t.TempDir()
	top1 := []float64{50, 70, 60, 70}
	calls := 0
	score := func(context.Context, *nn.Graph, *data.Loader) (Evaluation, error) {
		calls++
		return Evaluation{Result: Result{N: 48, Top1: top1[calls-1], Top5: 90, Loss: 1}}, nil
	}
	sum, err := Run(context.Background(), cfg, Options{Dir: dir, Hooks: Hooks{Evaluate: score}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.State.BestEpoch != 2 || sum.State.BestTop1 != 70 {
		t.Fatalf("best epoch %d (%v%%), want 2 (70%%)", sum.State.BestEpoch, sum.State.BestTop1)
	}
	load := func(name string) *Checkpoint {
		ck, err := LoadCheckpoint(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return ck
	}
	best, e2, e4, last := load(BestCheckpoint), load("epoch-002.safetensors"), load("epoch-004.safetensors"), load(LastCheckpoint)
	if best.State.Epoch != 2 || e2.State.Epoch != 2 || e4.State.Epoch != 4 {
		t.Fatalf("best at epoch %d, epoch-002 at %d, epoch-004 at %d", best.State.Epoch, e2.State.Epoch, e4.State.Epoch)
	}
	sameWeights := func(a, b *Checkpoint) bool {
		for i := range a.Params {
			if !slices.Equal(a.Params[i].Data, b.Params[i].Data) {
				return false
			}
		}
		return true
	}
	if !sameWeights(best, e2) || !sameWeights(e4, last) || sameWeights(best, last) {
		t.Fatal("best.safetensors does not hold epoch 2's weights, or epoch-004 not the last")
	}
	for _, absent := range []string{"epoch-001.safetensors", "epoch-003.safetensors"} {
		if _, err := os.Stat(filepath.Join(dir, absent)); err == nil {
			t.Errorf("%s written with checkpoint.every=2", absent)
		}
	}
	epochs, err := metrics.Read(dir, "epochs")
	if err != nil || len(epochs) != 4 || epochs[1]["val_top1"] != 70 || epochs[2]["val_top1"] != 60 {
		t.Fatalf("epoch records %v, %v", epochs, err)
	}
}

// With EMA on, the epoch records and the summary report the EMA weights'
// own evaluation; init.ema fine-tunes from those weights, not the trained
// ones.
func TestEMAEvaluationAndInitEMA(t *testing.T) {
	cfg := tinyConfig(t, "epochs=1", "ema.enabled=true", "ema.decay=0.9")
	dir := t.TempDir()
	sum, err := Run(context.Background(), cfg, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	last := filepath.Join(dir, LastCheckpoint)
	score := func(ema bool) Result {
		_, n, err := OpenNetwork(last, NetworkOptions{EMA: ema})
		if err != nil {
			t.Fatal(err)
		}
		g, err := n.Graph(cfg.Data.EvalBatchSize, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := OpenDatasets(cfg.Data)
		if err != nil {
			t.Fatal(err)
		}
		_, evalP, _ := Pipelines(cfg.Aug, 28, ds.Mean, ds.Std)
		l, err := data.NewLoader(data.LoaderConfig{Dataset: ds.Eval, BatchSize: cfg.Data.EvalBatchSize, Workers: 1, Pipeline: evalP})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := Evaluate(context.Background(), g, l)
		if err != nil {
			t.Fatal(err)
		}
		return ev.Result
	}
	emaR, plainR := score(true), score(false)
	if emaR.Loss == plainR.Loss {
		t.Fatal("the EMA and the trained weights score the same: the test cannot tell them apart")
	}
	epochs, err := metrics.Read(dir, "epochs")
	if err != nil {
		t.Fatal(err)
	}
	if sum.EMA == nil || sum.EMA.Top1 != emaR.Top1 || math.Abs(sum.EMA.Loss-emaR.Loss) > 1e-9*emaR.Loss || epochs[0]["ema_top1"] != emaR.Top1 {
		t.Errorf("EMA figures %+v and ema_top1 %v, the EMA weights score top-1 %v loss %v", sum.EMA, epochs[0]["ema_top1"], emaR.Top1, emaR.Loss)
	}
	if math.Abs(sum.Last.Loss-plainR.Loss) > 1e-9*plainR.Loss || epochs[0]["val_top1"] != plainR.Top1 {
		t.Errorf("val figures %+v, the trained weights score %+v", sum.Last.Result, plainR)
	}

	ck, err := LoadCheckpoint(last)
	if err != nil {
		t.Fatal(err)
	}
	for _, ema := range []bool{false, true} {
		ft, err := newTrainer(tinyConfig(t, "epochs=1", "init.from="+last, fmt.Sprintf("init.ema=%t", ema)), Options{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		ft.close()
		want := map[string][]float32{}
		for _, p := range ck.Params {
			want[p.Name] = p.Data
		}
		if ema {
			for _, p := range ck.EMA {
				want[strings.TrimPrefix(p.Name, "ema.")] = p.Data
			}
		}
		differ := 0
		for _, p := range ft.step.Params() {
			if !slices.Equal(p.Data, want[p.Name]) {
				t.Fatalf("init.ema=%t: %s is not the checkpoint's", ema, p.Name)
			}
			if !slices.Equal(p.Data, tensorsByName(ck.Params)[p.Name]) {
				differ++
			}
		}
		if ema && differ == 0 {
			t.Fatal("init.ema=true loaded the trained weights")
		}
	}
}

// An interrupt returns every batch to the loaders' pools, at a step
// boundary and during an evaluation.
func TestInterruptReleasesBatches(t *testing.T) {
	for _, stop := range []stopAt{{AfterStep, 2, 2}, {AfterMicroBatch, 0, 1}, {BeforeEvaluate, 6, 6}} {
		ctx, cancel := context.WithCancel(context.Background())
		at := func(p LoopPoint, s checkpoint.State) bool {
			if p == stop.point && s.Step == stop.step && s.Batch == stop.batch {
				cancel()
			}
			return false
		}
		tr, err := newTrainer(tinyConfig(t, "epochs=1"), Options{Dir: t.TempDir(), Hooks: Hooks{At: at}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.run(ctx); !errors.Is(err, ErrInterrupted) {
			t.Fatalf("%+v: want an interrupt, got %v", stop, err)
		}
		tr.close()
		cancel()
		if a, b := tr.batches.loader.Outstanding(), tr.eval.loader.Outstanding(); a != 0 || b != 0 {
			t.Errorf("%+v: %d training and %d evaluation batches not returned to their loaders", stop, a, b)
		}
	}
}

// A failed log write (a full disk) stops the run with an error naming the
// cause and the checkpoint kept, which stays as it was; resuming then
// completes the run with each step logged once.
func TestLogWriteFailureKeepsTheCheckpoint(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	for _, log := range []string{"steps", "epochs"} {
		t.Run(log, func(t *testing.T) {
			cfg := tinyConfig(t)
			dir := t.TempDir()
			if _, err := Run(context.Background(), cfg, Options{Dir: dir, Hooks: Hooks{At: StopAfterSteps(6)}}); !errors.Is(err, ErrInterrupted) {
				t.Fatalf("want a stop after epoch 1, got %v", err)
			}
			last := filepath.Join(dir, LastCheckpoint)
			before, err := os.ReadFile(last)
			if err != nil {
				t.Fatal(err)
			}
			full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer full.Close()
			onFull := func(name string, l RecordLog) RecordLog {
				if name == log {
					return onFullDisk{l, full}
				}
				return l
			}
			_, err = Run(context.Background(), cfg, Options{Dir: dir, Resume: true, Hooks: Hooks{Records: onFull}})
			if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), last+" (epoch 2, batch 0, step 6), is kept") {
				t.Fatalf("want ENOSPC naming the checkpoint kept, got %v", err)
			}
			after, err := os.ReadFile(last)
			if err != nil || !bytes.Equal(before, after) {
				t.Fatalf("the checkpoint changed after the failure (%v)", err)
			}
			if _, err := Run(context.Background(), cfg, Options{Dir: dir, Resume: true}); err != nil {
				t.Fatal(err)
			}
			steps := readSteps(t, dir)
			for i, r := range steps {
				if r["step"] != float64(i+1) {
					t.Fatalf("step records %v", steps)
				}
			}
			epochs, err := metrics.Read(dir, "epochs")
			if len(steps) != 12 || err != nil || len(epochs) != 2 {
				t.Fatalf("%d step records, epoch records %v (%v)", len(steps), epochs, err)
			}
		})
	}
}

// optim.accum_steps larger than an epoch's batches could take no step.
func TestAccumStepsLongerThanAnEpoch(t *testing.T) {
	_, err := newTrainer(tinyConfig(t, "optim.accum_steps=7"), Options{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "optim.accum_steps = 7") || !strings.Contains(err.Error(), "only 6 batches") {
		t.Fatalf("want an error naming optim.accum_steps, got %v", err)
	}
}

// evalLoader is a loader over the first n embedded test images.
func evalLoader(t *testing.T, n, batch int) *data.Loader {
	t.Helper()
	ds, err := OpenDatasets(DataConfig{Dataset: "fashion-mnist-embedded", EvalSubset: n})
	if err != nil {
		t.Fatal(err)
	}
	_, evalP, err := Pipelines(DefaultConfig().Aug, 28, ds.Mean, ds.Std)
	if err != nil {
		t.Fatal(err)
	}
	l, err := data.NewLoader(data.LoaderConfig{Dataset: ds.Eval, BatchSize: batch, Workers: 2, Pipeline: evalP})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func fmnistModel(t *testing.T, dt tensor.Dtype) *vit.ViT {
	t.Helper()
	mc, err := vit.Preset("vit_fmnist_patch4_28", model.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	build := vit.New
	if dt == tensor.Float64 {
		build = gradcheck.ViT
	}
	m, err := build(mc, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A cancelled context stops Evaluate before its next batch, returning
// every batch to the loader.
func TestEvaluateHonoursCancel(t *testing.T) {
	g, err := fmnistModel(t, tensor.Float32).BuildGraph(8, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := evalLoader(t, 64, 8)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Evaluate(ctx, g, l)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "after 0 of 64 images") {
		t.Fatalf("want a cancellation error, got %v", err)
	}
	if n := l.Outstanding(); n != 0 {
		t.Errorf("%d batches not returned to the loader", n)
	}
	if ev, err := Evaluate(context.Background(), g, l); err != nil || ev.N != 64 {
		t.Fatalf("uncancelled: %d images, %v", ev.N, err)
	}
}

// Inputs that used to panic inside Evaluate and the training step are
// errors: a float64 graph, batches larger than the graph's, images of
// another size.
func TestEvaluateAndStepRefuseMismatchedInputs(t *testing.T) {
	g64, err := fmnistModel(t, tensor.Float64).BuildGraph(8, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	g32, err := fmnistModel(t, tensor.Float32).BuildGraph(8, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	m56, err := vit.Preset("vit_fmnist_patch4_28", model.Overrides{ImageSize: 56})
	if err != nil {
		t.Fatal(err)
	}
	vit56, err := vit.New(m56, 0)
	if err != nil {
		t.Fatal(err)
	}
	g56, err := vit56.BuildGraph(8, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		g    *nn.Graph
		l    *data.Loader
		want string
	}{
		{"float64 graph", g64, evalLoader(t, 16, 8), "want []float32"},
		{"larger batches", g32, evalLoader(t, 32, 16), "batches hold 16 images, more than the graph's batch of 8"},
		{"other image size", g56, evalLoader(t, 16, 8), "the loader's images are (1, 28, 28)"},
	} {
		if _, err := Evaluate(context.Background(), c.g, c.l); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error containing %q, got %v", c.name, c.want, err)
		}
	}
}

// data.repeated_aug reaches the training loader: an epoch of 300 images
// keeps 256 (300//256·256), in batches of 16, and the eval loader is
// untouched; too few images for one batch is an error naming the key.
func TestRepeatedAugWiring(t *testing.T) {
	cfg := tinyConfig(t, "data.train_subset=300", "data.repeated_aug=3", "epochs=1")
	tr, err := newTrainer(cfg, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	if c := tr.batches.loader.Config(); c.RepeatedAug != 3 || tr.batches.loader.Len() != 256 || tr.batches.loader.NumBatches() != 16 {
		t.Fatalf("training loader: RepeatedAug %d, %d items, %d batches; want 3, 256, 16", c.RepeatedAug, tr.batches.loader.Len(), tr.batches.loader.NumBatches())
	}
	if tr.eval.loader.Config().RepeatedAug != 0 || tr.eval.loader.Len() != 48 {
		t.Fatalf("evaluation loader: RepeatedAug %d, %d items", tr.eval.loader.Config().RepeatedAug, tr.eval.loader.Len())
	}
	small := tinyConfig(t, "data.train_subset=200", "data.repeated_aug=3")
	if _, err := Run(context.Background(), small, Options{Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "data.repeated_aug = 3") {
		t.Fatalf("200 images with repeated augmentation: want an error naming data.repeated_aug, got %v", err)
	}
	if _, err := loadConfig("", []string{"data.repeated_aug=-1"}); err == nil || !strings.Contains(err.Error(), "data.repeated_aug") {
		t.Fatalf("data.repeated_aug=-1: want an error, got %v", err)
	}
}

// onFullDisk is a metrics log whose records are written to /dev/full
// (metrics.Log's own tests check that a failed write names its file).
type onFullDisk struct {
	RecordLog
	full *os.File
}

func (l onFullDisk) Write(rec []metrics.Field) error {
	if _, err := fmt.Fprintln(l.full, rec); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}
