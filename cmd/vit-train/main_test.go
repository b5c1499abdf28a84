package main

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/nn/blas"
)

// run executes the CLI with args and returns what it printed.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestInfoJSON(t *testing.T) {
	out, err := run(t, "info", "--model", "vit_huge_patch14_224", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var info modelInfo
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatal(err)
	}
	if info.Params != 632045800 || info.Tokens != 257 || info.ParamBytes != 4*632045800 {
		t.Fatalf("info: %+v", info)
	}
	out, err = run(t, "info", "--model", "resnet50", "--img-size", "224", "--num-classes", "1000", "--json")
	if err != nil {
		t.Fatal(err)
	}
	info = modelInfo{}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatal(err)
	}
	// torchvision's resnet50: 25,557,032 parameters, 4.09 GMACs.
	if info.Arch != "resnet" || info.Params != 25557032 || math.Abs(info.ForwardGMACs-4.09) > 0.01 || info.Tokens != 0 {
		t.Fatalf("info --model resnet50: %+v", info)
	}
	if _, err := run(t, "info", "--model", "resnet50"); err == nil || !strings.Contains(err.Error(), "--img-size and --num-classes") {
		t.Fatalf("info --model resnet50 without an input: %v", err)
	}
	if _, err := run(t, "info", "--model", "vit_base_patch16_224", "--img-size", "100"); err == nil {
		t.Fatal("want an error for an image size the patch does not divide")
	}
	out, err = run(t, "models")
	if err != nil || !strings.Contains(out, "deit_base_distilled_patch16_224") || !strings.Contains(out, "87338192") || !strings.Contains(out, "resnet20") {
		t.Fatalf("models: %v\n%s", err, out)
	}
}

func TestBenchJSON(t *testing.T) {
	memProfile := filepath.Join(t.TempDir(), "mem.prof")
	out, err := run(t, "bench", "--model", "vit_fmnist_patch4_28", "--batch", "8", "--steps", "2", "--distilled", "--json", "--memprofile", memProfile, "--op-times")
	if err != nil {
		t.Fatal(err)
	}
	// A pprof profile is a gzipped protocol buffer.
	if b, err := os.ReadFile(memProfile); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("--memprofile wrote no gzipped profile (%d bytes, %v)", len(b), err)
	}
	var r benchResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !(r.TrainImagesPerS > 0 && r.InferImagesPerS > 0 && r.TrainGFLOPs > 0 && r.PeakRSSBytes > 0) || r.Batch != 8 {
		t.Fatalf("bench: %+v", r)
	}
	// The shares of the peak are the GFLOP/s over the measured peak;
	// a tiny model at batch 8 reaches well under all of it.
	if p := r.Peak.GFLOPs; p > 0 {
		if r.Peak.Threads != r.Threads || math.Abs(r.TrainPeakShare-r.TrainGFLOPs/p) > 1e-9 ||
			math.Abs(r.InferPeakShare-r.InferGFLOPs/p) > 1e-9 || !(r.TrainPeakShare > 0 && r.TrainPeakShare < 1) ||
			r.PeakRaised || r.Processor.Name == "" {
			t.Fatalf("bench peak: %+v", r)
		}
	} else if r.TrainPeakShare != 0 || r.InferPeakShare != 0 {
		t.Fatalf("bench: shares of an unmeasured peak: %+v", r)
	}
	// The model's 4 blocks: fc1 with GELU in both passes, attention's
	// backward in training only.
	checkOpTimes(t, "training", r.TrainOps, map[string]float64{"LinearGELU": 4, "AttentionGrad": 4, "Attention": 4})
	checkOpTimes(t, "inference", r.InferOps, map[string]float64{"LinearGELU": 4, "Attention": 4, "AttentionGrad": 0})
}

// checkOpTimes checks bench's op-by-op times of a step: the ops' time a
// step, each positive, sums to no more than the step's own; ops appear
// once per kind and output shape, longest first; and each op of calls
// runs that many times a step, summed over its output shapes.
func checkOpTimes(t *testing.T, name string, ot *opTimes, calls map[string]float64) {
	t.Helper()
	if ot == nil || len(ot.Ops) == 0 {
		t.Fatalf("bench --op-times: no %s ops", name)
	}
	var sum float64
	seen := make(map[[2]string]bool)
	got := make(map[string]float64)
	for i, o := range ot.Ops {
		if o.MsPerStep <= 0 || (i > 0 && o.MsPerStep > ot.Ops[i-1].MsPerStep) || seen[[2]string{o.Op, o.Shape}] {
			t.Fatalf("bench --op-times, %s: op %d of %+v", name, i, ot.Ops)
		}
		seen[[2]string{o.Op, o.Shape}] = true
		sum += o.MsPerStep
		got[o.Op] += o.CallsPerStep
	}
	if sum > ot.MsPerStep {
		t.Fatalf("bench --op-times, %s: the ops took %.3f ms of a %.3f ms step", name, sum, ot.MsPerStep)
	}
	for op, want := range calls {
		if got[op] != want {
			t.Errorf("bench --op-times, %s: %v calls of %s a step, want %v", name, got[op], op, want)
		}
	}
}

// TestTrainEvalPredict runs the main job on a slice of the embedded data,
// then evaluates the checkpoint and classifies images written as PNG files.
func TestTrainEvalPredict(t *testing.T) {
	dir := t.TempDir()
	out, err := run(t, "train", "--out", dir, "--set", "epochs=1", "--set", "data.train_subset=512",
		"--set", "data.eval_subset=250", "--set", "progress=false")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "test accuracy") {
		t.Fatalf("train output lacks the test accuracy:\n%s", out)
	}
	for _, f := range []string{"last.safetensors", "best.safetensors", "config.yaml", "steps.csv", "epochs.jsonl", "eval_confusion.csv", "loss.png", "top1.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("run folder lacks %s", f)
		}
	}
	confusion := filepath.Join(dir, "eval_confusion.csv")
	trained, err := os.Stat(confusion)
	if err != nil {
		t.Fatal(err)
	}
	out, err = run(t, "eval", "--checkpoint", filepath.Join(dir, "last.safetensors"), "--set", "data.eval_subset=250", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// eval's reports go beside the run's own, which stay as training left them.
	if now, err := os.Stat(confusion); err != nil || !now.ModTime().Equal(trained.ModTime()) {
		t.Errorf("eval rewrote the run's %s (%v)", confusion, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "eval_last", "eval_confusion.csv")); err != nil {
		t.Errorf("eval wrote no report into eval_last: %v", err)
	}
	var ev struct {
		N    int
		Top1 float64
	}
	if err := json.Unmarshal([]byte(out), &ev); err != nil || ev.N != 250 {
		t.Fatalf("eval: %v %+v\n%s", err, ev, out)
	}

	files := writeTestPNGs(t, dir, 3)
	out, err = run(t, append([]string{"predict", "--checkpoint", filepath.Join(dir, "last.safetensors"), "--top", "3", "--json", "--logits"}, files...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("want one JSON line per image, got:\n%s", out)
	}
	for i, l := range lines {
		var p prediction
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, c := range p.Top {
			sum += c.Probability
		}
		if p.File != files[i] || len(p.Top) != 3 || len(p.Logits) != 10 || sum > 1+1e-9 || p.Top[0].Probability < p.Top[1].Probability ||
			p.Top[0].Label != data.FashionMNISTClasses()[p.Top[0].Class] {
			t.Fatalf("prediction %d: %+v", i, p)
		}
	}
}

// writeTestPNGs writes the first n images of the embedded Fashion-MNIST
// test split as PNG files into dir and returns their paths.
func writeTestPNGs(t *testing.T, dir string, n int) []string {
	t.Helper()
	test, err := data.EmbeddedFashionMNIST(data.Test)
	if err != nil {
		t.Fatal(err)
	}
	return writePNGs(t, dir, test, n)
}

// writePNGs writes the first n images of the grey-scale dataset test as
// PNG files into dir and returns their paths.
func writePNGs(t *testing.T, dir string, test data.Dataset, n int) []string {
	t.Helper()
	var files []string
	for i := 0; i < n; i++ {
		img, _, err := test.Item(i)
		if err != nil {
			t.Fatal(err)
		}
		g := image.NewGray(image.Rect(0, 0, img.W, img.H))
		for j, v := range img.Pix {
			g.Pix[j] = uint8(v*255 + 0.5)
		}
		p := filepath.Join(dir, "img"+string(rune('0'+i))+".png")
		f, _ := os.Create(p)
		if err := png.Encode(f, g); err != nil {
			t.Fatal(err)
		}
		f.Close()
		files = append(files, p)
	}
	return files
}

func TestTopK(t *testing.T) {
	got := topK([]float32{0, 2, 1}, 2, []string{"a", "b", "c"})
	if len(got) != 2 || got[0].Class != 1 || got[1].Class != 2 || got[0].Label != "b" {
		t.Fatalf("topK: %+v", got)
	}
}

// TestBenchMixedPrecision runs bench --precision mixed where a
// low-precision product runs: its rates are shares of that product's
// peak, never above it.
func TestBenchMixedPrecision(t *testing.T) {
	if blas.Mixed().IsFP32() {
		if _, err := run(t, "bench", "--model", "vit_fmnist_patch4_28", "--batch", "2", "--steps", "1", "--precision", "mixed"); err == nil || !strings.Contains(err.Error(), "model.precision = mixed") {
			t.Fatalf("bench --precision mixed with no fast low-precision product: %v", err)
		}
		t.Skip("no low-precision product faster than float32 here: bench --precision mixed is an error, as checked")
	}
	out, err := run(t, "bench", "--model", "vit_fmnist_patch4_28", "--batch", "8", "--steps", "1", "--precision", "mixed", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r benchResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	v := blas.Mixed()
	if r.TrainOps != nil || r.InferOps != nil {
		t.Fatalf("bench without --op-times timed ops: %+v, %+v", r.TrainOps, r.InferOps)
	}
	if r.Precision != "mixed" || r.Products != v.Describe() || (r.Peak.GFLOPs > 0 && string(r.Peak.Kind) != string(v)) ||
		!(r.TrainImagesPerS > 0) || r.TrainPeakShare > 1 || r.InferPeakShare > 1 {
		t.Fatalf("bench --precision mixed: %+v", r)
	}
	t.Logf("bench --precision mixed ran %s products", v)
}

// TestBenchTakesTrainSettings runs bench with trainer settings from
// --config and --set, and checks the shorthands and errors.
func TestBenchTakesTrainSettings(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(cfgPath, []byte("optim:\n  name: sgd\n  clip_grad: 1\nema:\n  enabled: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "bench", "--model", "vit_fmnist_patch4_28", "--batch", "4", "--steps", "1", "--json",
		"--config", cfgPath, "--set", "optim.accum_steps=2", "--set", "data.batch_size=6")
	if err != nil {
		t.Fatal(err)
	}
	var r benchResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Batch != 6 || !(r.TrainMsPerStep > 0) {
		t.Fatalf("--set data.batch_size=6 after --batch 4: %+v", r)
	}
	// A ResNet, with the input bench cannot take from a data set given.
	out, err = run(t, "bench", "--model", "resnet20", "--img-size", "32", "--num-classes", "10", "--batch", "2", "--steps", "1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	r = benchResult{}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Model != "resnet20" || r.Params != 272474 || !(r.TrainGFLOPs > 0) || !(r.InferImagesPerS > 0) {
		t.Fatalf("bench --model resnet20: %+v", r)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "distill.type=hard", "--set", "distill.teacher_logits=x.npy"}, "random teacher logits"},
		{[]string{"--set", "optim.name=lamb"}, "optim.name"},
		{[]string{"--precision", "half"}, "model.precision"},
		{[]string{"--model", "resnet20"}, "takes its image size and classes from the data"},
	} {
		args := append([]string{"bench", "--model", "vit_fmnist_patch4_28", "--batch", "2", "--steps", "1"}, c.args...)
		if _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("bench %v: error %v, want one naming %q", c.args, err, c.want)
		}
	}
}
