package main

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/npy"
	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/train"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// onnxRuntimeDir holds the package.json of onnxruntime-node and the script
// that runs a model with it.
const onnxRuntimeDir = "../../scripts/onnx"

// onnxRuntime returns the node binary and the runner script, or skips the
// test when Node.js or onnxruntime-node is missing — unless
// VIT_TRAIN_ONNXRUNTIME=required (as CI sets it), which makes that a
// failure.
func onnxRuntime(t *testing.T) (node, script string) {
	t.Helper()
	missing := func(what string) {
		msg := what + "; install it with: cd scripts/onnx && ONNXRUNTIME_NODE_INSTALL=skip npm ci"
		if os.Getenv("VIT_TRAIN_ONNXRUNTIME") == "required" {
			t.Fatal("VIT_TRAIN_ONNXRUNTIME=required but " + msg)
		}
		t.Skip("ONNX Runtime check skipped: " + msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("Node.js (node) is not on PATH")
	}
	if _, err := os.Stat(filepath.Join(onnxRuntimeDir, "node_modules", "onnxruntime-node", "package.json")); err != nil {
		missing("onnxruntime-node is not installed in " + onnxRuntimeDir)
	}
	script, err = filepath.Abs(filepath.Join(onnxRuntimeDir, "run.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	return node, script
}

// ortResult is what run.mjs prints.
type ortResult struct {
	Inputs       []string             `json:"inputs"`
	Outputs      []string             `json:"outputs"`
	InputShape   []any                `json:"input_shape"`
	OutputShapes map[string][]int     `json:"output_shapes"`
	Logits       map[string][]float32 `json:"-"`
}

// runORT runs model on images (N, C, H, W) with ONNX Runtime and returns
// every output.
func runORT(t *testing.T, model string, images []float32, shape []int) ortResult {
	t.Helper()
	node, script := onnxRuntime(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "input.npy")
	if err := npy.WriteFile(in, images, shape); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, script, model, in, filepath.Join(dir, "out"), "--threads", "2")
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if e, ok := err.(*exec.ExitError); ok {
			stderr = string(e.Stderr)
		}
		t.Fatalf("ONNX Runtime on %s: %v\n%s%s", model, err, out, stderr)
	}
	var r ortResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("run.mjs printed %q: %v", out, err)
	}
	r.Logits = map[string][]float32{}
	for _, name := range r.Outputs {
		a, err := npy.ReadFile(filepath.Join(dir, "out."+name+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Shape, r.OutputShapes[name]) || a.Shape[0] != shape[0] {
			t.Fatalf("output %s: shape %v, reported %v, batch %d", name, a.Shape, r.OutputShapes[name], shape[0])
		}
		r.Logits[name] = a.Data
	}
	return r
}

// evalImages returns the images vit-train's evaluation pipeline feeds the
// checkpoint's network over the test split (with sets applied), in item
// order, (N, C, H, W).
func evalImages(t *testing.T, ck string, sets []string) ([]float32, []int) {
	t.Helper()
	r, err := train.OpenEval(ck, train.EvalOptions{Sets: sets})
	if err != nil {
		t.Fatal(err)
	}
	n := r.Items.Len()
	var images []float32
	var shape []int
	it := r.Loader.Epoch(0, 0)
	defer it.Close()
	for it.Next() {
		b := it.Batch()
		per := b.C * b.H * b.W
		if images == nil {
			images, shape = make([]float32, n*per), []int{n, b.C, b.H, b.W}
		}
		for i, j := range b.Indices[:b.N] {
			copy(images[j*per:(j+1)*per], b.Images[i*per:(i+1)*per])
		}
		b.Release()
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return images, shape
}

// parity is max |a − b| / max |b|.
func parity(t *testing.T, got, want []float32) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d logits, want %d", len(got), len(want))
	}
	var diff, peak float64
	for i := range want {
		diff = max(diff, math.Abs(float64(got[i])-float64(want[i])))
		peak = max(peak, math.Abs(float64(want[i])))
	}
	if peak == 0 {
		t.Fatal("every reference logit is 0: the comparison would prove nothing")
	}
	return diff / peak
}

// checkONNXParity exports ck as ONNX, runs it with ONNX Runtime on the
// images vit-train feeds the model over the test split, at the given batch
// sizes (each a prefix of the split), and compares the logits with
// `vit-train logits`: max |Δ| ≤ 1e-4 · max |logit|.
func checkONNXParity(t *testing.T, name, ck string, sets []string, batches []int, exportArgs ...string) ortResult {
	t.Helper()
	onnxRuntime(t)
	dir := t.TempDir()
	model := filepath.Join(dir, name+".onnx")
	args := append([]string{"export", "--checkpoint", ck, "--format", "onnx", "--out", model}, exportArgs...)
	if out, err := run(t, args...); err != nil || !strings.Contains(out, "wrote "+model) {
		t.Fatalf("export: %v\n%s", err, out)
	}
	logitsPath := filepath.Join(dir, "logits.npy")
	args = []string{"logits", "--checkpoint", ck, "--split", "test", "--out", logitsPath}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	if out, err := run(t, args...); err != nil {
		t.Fatalf("logits: %v\n%s", err, out)
	}
	want, err := npy.ReadFile(logitsPath)
	if err != nil {
		t.Fatal(err)
	}
	images, shape := evalImages(t, ck, sets)
	if shape[0] != want.Shape[0] {
		t.Fatalf("%d images, %d rows of logits", shape[0], want.Shape[0])
	}
	per, classes := shape[1]*shape[2]*shape[3], want.Shape[1]
	var last ortResult
	for _, n := range batches {
		r := runORT(t, model, images[:n*per], append([]int{n}, shape[1:]...))
		if r.Inputs[0] != "pixel_values" || r.Outputs[0] != "logits" || len(r.InputShape) != 4 || r.InputShape[0] != "batch" {
			t.Fatalf("ONNX Runtime sees inputs %v %v, outputs %v", r.Inputs, r.InputShape, r.Outputs)
		}
		rel := parity(t, r.Logits["logits"], want.Data[:n*classes])
		t.Logf("ONNX parity %-34s batch %2d: max |Δ| / max |logit| = %.2e", name, n, rel)
		if rel > 1e-4 {
			t.Errorf("%s, batch %d: ONNX Runtime's logits differ from vit-train's by %.3g of the largest logit, want ≤ 1e-4", name, n, rel)
		}
		last = r
	}
	return last
}

// randomCheckpoint writes a checkpoint of the registered model name with
// overrides o, every tensor drawn at random: N(0, 0.05²) added to each
// parameter's initial value, so that no head is zero, and batch-norm
// running means and variances drawn around 0 and 1. Three-channel models
// are normalised with ImageNet's mean and std.
func randomCheckpoint(t *testing.T, name string, o model.Overrides) string {
	t.Helper()
	spec, err := model.Create(name, o)
	if err != nil {
		t.Fatal(err)
	}
	net, err := model.New(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range net.Tensors() {
		for i := range p.Data {
			switch {
			case strings.HasSuffix(p.Name, ".running_var"):
				p.Data[i] = float32(0.5 + rng.Float64())
			case strings.HasSuffix(p.Name, ".running_mean"):
				p.Data[i] = float32(0.1 * rng.NormFloat64())
			default:
				p.Data[i] += float32(0.05 * rng.NormFloat64())
			}
		}
	}
	mean, std := []float32{0.5}, []float32{0.25}
	if channels, _ := spec.Input(); channels == 3 {
		mean, std = data.ImageNetMeanStd()
	}
	ck := checkpoint.File{Spec: spec, Mean: mean, Std: std, Params: net.Tensors()}
	path := filepath.Join(t.TempDir(), name+".safetensors")
	if err := ck.Save(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// imageFolder writes an ImageNet-style folder of random RGB images of
// w×h: 5 classes, 2+2+1+1+1 = 7 validation images, one training image per
// class.
func imageFolder(t *testing.T, w, h int) string {
	t.Helper()
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	for c := range 5 {
		for split, n := range map[string]int{"train": 1, "val": 1 + boolToInt(c < 2)} {
			dir := filepath.Join(root, split, fmt.Sprintf("class%d", c))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				img := image.NewRGBA(image.Rect(0, 0, w, h))
				// Smooth colour gradients plus noise, so resizing matters.
				for y := range h {
					for x := range w {
						img.Set(x, y, color.RGBA{uint8(255 * x / w), uint8(255 * y / h), uint8(rng.IntN(256)), 255})
					}
				}
				f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d.png", i)))
				if err != nil {
					t.Fatal(err)
				}
				if err := png.Encode(f, img); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
		}
	}
	return root
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestONNXExportMatchesVitTrain exports trained and random ViTs, a
// distilled DeiT, a ResNet-20 and a model fine-tuned at 56 px as ONNX and
// checks that ONNX Runtime computes vit-train's logits on the same
// preprocessed images.
func TestONNXExportMatchesVitTrain(t *testing.T) {
	onnxRuntime(t)
	dir := t.TempDir()
	small := []string{"--set", "data.train_subset=256", "--set", "data.batch_size=64", "--set", "data.eval_subset=16",
		"--set", "data.eval_batch_size=16", "--set", "progress=false"}
	fmnist := filepath.Join(dir, "fmnist")
	if out, err := run(t, append([]string{"train", "--out", fmnist, "--set", "epochs=1"}, small...)...); err != nil {
		t.Fatalf("train: %v\n%s", err, out)
	}
	fmnistCk := filepath.Join(fmnist, "last.safetensors")
	folder3 := []string{"data.dataset=imagefolder", "data.root=" + imageFolder(t, 40, 30), "data.eval_batch_size=7", "data.workers=1"}

	t.Run("vit_fmnist_patch4_28 trained", func(t *testing.T) {
		checkONNXParity(t, "vit_fmnist_patch4_28", fmnistCk, nil, []int{16})
	})
	t.Run("vit_cifar_patch4_32 random, batch 1 and 7", func(t *testing.T) {
		ck := randomCheckpoint(t, "vit_cifar_patch4_32", model.Overrides{NumClasses: 5})
		checkONNXParity(t, "vit_cifar_patch4_32", ck, folder3, []int{1, 7})
		checkONNXParity(t, "vit_cifar_patch4_32 external data", ck, folder3, []int{7}, "--external-data")
	})
	t.Run("deit_tiny_distilled_patch16_224 random, both heads", func(t *testing.T) {
		ck := randomCheckpoint(t, "deit_tiny_distilled_patch16_224", model.Overrides{NumClasses: 5})
		r := checkONNXParity(t, "deit_tiny_distilled_patch16_224", ck, folder3, []int{7}, "--outputs", "both")
		if !slices.Equal(r.Outputs, []string{"logits", "cls_logits", "dist_logits"}) {
			t.Fatalf("outputs %v", r.Outputs)
		}
		mean := make([]float32, len(r.Logits["logits"]))
		for i := range mean {
			mean[i] = (r.Logits["cls_logits"][i] + r.Logits["dist_logits"][i]) / 2
		}
		if rel := parity(t, mean, r.Logits["logits"]); rel > 1e-6 {
			t.Errorf("logits are not the mean of cls_logits and dist_logits: %.3g", rel)
		}
		if rel := parity(t, r.Logits["cls_logits"], r.Logits["dist_logits"]); rel < 1e-3 {
			t.Errorf("the two heads agree to %.3g: the test cannot tell them apart", rel)
		}
	})
	t.Run("resnet20 trained", func(t *testing.T) {
		runDir := filepath.Join(dir, "resnet20")
		if out, err := run(t, append([]string{"train", "--model", "resnet20", "--out", runDir, "--set", "epochs=1"}, small...)...); err != nil {
			t.Fatalf("train: %v\n%s", err, out)
		}
		checkONNXParity(t, "resnet20", filepath.Join(runDir, "last.safetensors"), nil, []int{16})
	})
	t.Run("resnet18 and resnet50 random", func(t *testing.T) {
		for _, arch := range []string{"resnet18", "resnet50"} {
			ck := randomCheckpoint(t, arch, model.Overrides{NumClasses: 5, Channels: 3, ImageSize: 64})
			checkONNXParity(t, arch+" at 64 px", ck, folder3, []int{7})
		}
	})
	t.Run("vit_fmnist_patch4_28 fine-tuned at 56 px", func(t *testing.T) {
		runDir := filepath.Join(dir, "ft56")
		if out, err := run(t, append([]string{"finetune", "--from", fmnistCk, "--img-size", "56", "--out", runDir, "--set", "epochs=1"}, small...)...); err != nil {
			t.Fatalf("finetune: %v\n%s", err, out)
		}
		checkONNXParity(t, "vit_fmnist_patch4_28 at 56 px", filepath.Join(runDir, "last.safetensors"), nil, []int{16})
	})
	t.Run("vit_base_patch16_224 random", func(t *testing.T) {
		if testing.Short() {
			t.Skip("ViT-B/16 (86M parameters) is left out with -short")
		}
		ck := randomCheckpoint(t, "vit_base_patch16_224", model.Overrides{NumClasses: 5})
		checkONNXParity(t, "vit_base_patch16_224", ck, append(folder3, "data.eval_subset=2"), []int{2})
	})
}

func TestONNXExportErrors(t *testing.T) {
	ck := tinyVizCheckpoint(t) // a distilled ViT
	out := filepath.Join(t.TempDir(), "m.onnx")
	st := filepath.Join(t.TempDir(), "m.safetensors")
	for _, c := range []struct {
		out  string
		args []string
		want string
	}{
		{out, []string{"--format", "tflite"}, `--format "tflite": want safetensors or onnx`},
		{out, []string{"--format", "onnx", "--outputs", "heads"}, `--outputs "heads": want logits or both`},
		{st, []string{"--outputs", "both"}, "--outputs applies to --format onnx only"},
		{st, []string{"--external-data"}, "--external-data applies to --format onnx only"},
		{st, []string{"--crop-pct", "0.9"}, "--crop-pct applies to --format onnx only"},
		{out, []string{"--format", "onnx", "--interpolation", "random"}, "--interpolation random: evaluation resizes with one filter"},
		{out, []string{"--format", "safetensors"}, "--format safetensors does not match --out " + out},
		{st, []string{"--format", "onnx"}, "--format onnx does not match --out " + st},
	} {
		_, err := run(t, append([]string{"export", "--checkpoint", ck, "--out", c.out}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("export %v: got %v, want %q", c.args, err, c.want)
		}
	}
	// Without --format, an --out ending in .onnx is an ONNX model.
	if printed, err := run(t, "export", "--checkpoint", ck, "--out", out); err != nil || !strings.Contains(printed, "ONNX opset") {
		t.Errorf("export --out m.onnx: %v\n%s", err, printed)
	}
	if _, err := safetensors.ReadFile(out); err == nil {
		t.Errorf("export --out m.onnx wrote a safetensors file")
	}
	plain := randomCheckpoint(t, "vit_fmnist_patch4_28", model.Overrides{})
	_, err := run(t, "export", "--checkpoint", plain, "--out", out, "--format", "onnx", "--outputs", "both")
	if err == nil || !strings.Contains(err.Error(), "one head") {
		t.Errorf("--outputs both for a model with one head: %v", err)
	}
}
