package main

import (
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/optim"
	"github.com/vit-train/vit-train/train"
	"github.com/vit-train/vit-train/train/checkpoint"
)

const interopGolden = "../../interop/testdata/golden/"

// TestImportExport converts PyTorch's golden ViT to a checkpoint and back:
// the exported file holds the state dict PyTorch wrote, tensor for tensor.
func TestImportExport(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck.safetensors")
	out, err := run(t, "import", "--from", interopGolden+"vit_plain.safetensors", "--heads", "3", "--out", ck)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "as vit_plain: 16 px, patch 4, 3 channels, dim 24, depth 2, heads 3, MLP 48, 5 classes") {
		t.Errorf("import printed %q", out)
	}
	c, err := train.LoadCheckpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	inMean, inStd := data.ImageNetMeanStd()
	if c.Spec.Config.(vit.Config).Name != "vit_plain" || c.Spec.Config.(vit.Config).NumClasses != 5 || !slices.Equal(c.Mean, inMean) ||
		!slices.Equal(c.Std, inStd) || !slices.Equal(c.Classes, []string{"0", "1", "2", "3", "4"}) || c.Config != nil {
		t.Errorf("checkpoint %+v", c)
	}
	// timm's pretrained ViT preprocessing: crop_pct 0.9, bicubic.
	if c.Eval == nil || *c.Eval != (checkpoint.Preprocessing{CropPct: 0.9, Interpolation: augment.Bicubic}) {
		t.Errorf("imported preprocessing %+v, want timm's", c.Eval)
	}
	exported := filepath.Join(dir, "timm.safetensors")
	if out, err = run(t, "export", "--checkpoint", ck, "--out", exported); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "VisionTransformer(img_size=16, patch_size=4, in_chans=3, num_classes=5, embed_dim=24, depth=2, num_heads=3, mlp_ratio=2, qkv_bias=True)") {
		t.Errorf("export printed %q", out)
	}
	sameFileTensors(t, exported, interopGolden+"vit_plain.safetensors")
}

// sameFileTensors checks that two safetensors files hold the same tensors,
// bit for bit, the first as F32 with metadata format=pt.
func sameFileTensors(t *testing.T, path, want string) {
	t.Helper()
	got, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := safetensors.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Tensors) != len(ref.Tensors) || len(got.Metadata) != 1 || got.Metadata["format"] != "pt" {
		t.Fatalf("%d tensors, metadata %v; want %d tensors, format=pt", len(got.Tensors), got.Metadata, len(ref.Tensors))
	}
	for _, w := range ref.Tensors {
		g, ok := got.Get(w.Name)
		if !ok || g.DType != safetensors.F32 || !slices.Equal(g.Shape, w.Shape) || !slices.Equal(g.Data, w.Data) {
			t.Errorf("tensor %q differs", w.Name)
		}
	}
}

func TestImportJAXDefaultsAndFlags(t *testing.T) {
	dir := t.TempDir()
	classes := filepath.Join(dir, "classes.txt")
	if err := os.WriteFile(classes, []byte("a\nb\nc\nd\ne\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, "jax.safetensors")
	out, err := run(t, "import", "--from", interopGolden+"vit_plain.npz", "--img-size", "24", "--name", "g", "--classes", classes, "--out", ck,
		"--crop-pct", "0.95", "--interpolation", "bilinear")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "Google JAX npz") || !strings.Contains(out, "note: resampled pos_embed from a 4×4 to a 6×6") {
		t.Errorf("import printed %q", out)
	}
	c, err := train.LoadCheckpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	if c.Spec.Config.(vit.Config).Name != "g" || c.Spec.Config.(vit.Config).Heads != 3 || c.Spec.Config.(vit.Config).ImageSize != 24 || !slices.Equal(c.Mean, []float32{0.5, 0.5, 0.5}) ||
		!slices.Equal(c.Classes, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("checkpoint %+v", c)
	}
	if c.Eval == nil || *c.Eval != (checkpoint.Preprocessing{CropPct: 0.95, Interpolation: augment.Bilinear}) {
		t.Errorf("imported preprocessing %+v, want --crop-pct 0.95, bilinear", c.Eval)
	}
}

func TestImportExportErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.safetensors")
	plain := interopGolden + "vit_plain.safetensors"
	resnet := randomCheckpoint(t, "resnet20", model.Overrides{Channels: 1, ImageSize: 28, NumClasses: 10})
	vitCk := randomCheckpoint(t, "vit_fmnist_patch4_28", model.Overrides{})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "--from", plain, "--out", out}, "attention heads cannot be inferred"},
		{[]string{"import", "--from", plain, "--out", out, "--model", "vit_tiny_patch16_224"}, "the file has embed_dim 24, preset vit_tiny_patch16_224 has 192"},
		{[]string{"import", "--from", plain, "--out", out, "--heads", "3", "--mean", "0.5"}, "need 3 values each"},
		{[]string{"import", "--from", plain, "--out", out, "--heads", "3", "--mean", "0,0,0", "--std", "1,0,1"}, "--std value 1 is 0"},
		{[]string{"import", "--from", plain, "--out", out, "--heads", "3", "--classes", plain}, "lines, the model has 5 classes"},
		{[]string{"import", "--from", plain, "--heads", "3"}, `"out" not set`},
		{[]string{"export", "--checkpoint", plain, "--out", out}, "not a vit-train checkpoint"},
		{[]string{"import", "--from", resnet, "--out", out}, "already a vit-train checkpoint of a resnet network"},
		{[]string{"import", "--from", plain, "--out", out, "--heads", "3", "--crop-pct", "1.2"}, "--crop-pct 1.2, --interpolation bicubic: crop_pct is 1.2"},
		{[]string{"import", "--from", plain, "--out", out, "--heads", "3", "--interpolation", "random"}, "interpolation is random, want bilinear or bicubic"},
		{[]string{"import", "--from", vitCk, "--out", out}, "already a vit-train checkpoint of a vit network"},
	} {
		if _, err := run(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed command left %s", out)
	}
}

// TestExportEMA exports a checkpoint's EMA weights under timm's names.
func TestExportEMA(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck.safetensors")
	if out, err := run(t, "import", "--from", interopGolden+"vit_plain.safetensors", "--heads", "3", "--out", ck); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	c, err := train.LoadCheckpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "export", "--checkpoint", ck, "--ema", "--out", filepath.Join(dir, "e.safetensors")); err == nil || !strings.Contains(err.Error(), "no EMA weights") {
		t.Errorf("export --ema without EMA: %v", err)
	}
	// The EMA holds the weights; the model's own are zeroed.
	for i, p := range c.Params {
		c.EMA = append(c.EMA, optim.Tensor{Name: "ema." + p.Name, Shape: p.Shape, Data: slices.Clone(p.Data)})
		c.Params[i].Data = make([]float32, len(p.Data))
	}
	if err := c.Save(ck); err != nil {
		t.Fatal(err)
	}
	exported := filepath.Join(dir, "ema.safetensors")
	if out, err := run(t, "export", "--checkpoint", ck, "--ema", "--out", exported); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	sameFileTensors(t, exported, interopGolden+"vit_plain.safetensors")
}

// TestImportedCustomViTWorksWithEveryCommand imports a timm file holding a
// ViT that is no preset, under a name of its own, then fine-tunes it,
// resumes the fine-tuning run, evaluates, predicts with, writes the logits
// of and exports it: each command builds the model from the configuration
// the checkpoint (or the run's config.yaml) carries.
func TestImportedCustomViTWorksWithEveryCommand(t *testing.T) {
	dir := t.TempDir()
	custom := vit.Config{Name: "timm_file", ImageSize: 28, PatchSize: 7, Channels: 1, NumClasses: 10, EmbedDim: 16,
		Depth: 1, Heads: 2, MLPDim: 32, LayerNormEps: 1e-6, QKVBias: true}
	m, err := vit.New(custom, 1)
	if err != nil {
		t.Fatal(err)
	}
	timmFile := filepath.Join(dir, "timm.safetensors")
	if err := safetensors.WriteFileAtomic(timmFile, m.Tensors(), map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	imported := filepath.Join(dir, "imported.safetensors")
	if out, err := run(t, "import", "--from", timmFile, "--heads", "2", "--img-size", "28", "--name", "my_vit",
		"--mean", "0.2860", "--std", "0.3530", "--out", imported); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	runDir := filepath.Join(dir, "run")
	out, err := run(t, "finetune", "--from", imported, "--out", runDir, "--set", "epochs=1", "--set", "data.train_subset=64",
		"--set", "data.batch_size=32", "--set", "data.eval_subset=50", "--set", "data.eval_batch_size=25", "--set", "progress=false")
	if err != nil || !strings.Contains(out, "model my_vit") || !strings.Contains(out, "initialised from "+imported) {
		t.Fatalf("finetune: %v\n%s", err, out)
	}
	if out, err := run(t, "train", "--out", runDir, "--resume", "--set", "epochs=2"); err != nil || !strings.Contains(out, "model my_vit") {
		t.Fatalf("resuming the fine-tuning run from its config.yaml: %v\n%s", err, out)
	}
	ck := filepath.Join(runDir, "last.safetensors")
	npy := filepath.Join(dir, "test.npy")
	if out, err := run(t, "logits", "--checkpoint", ck, "--split", "test", "--out", npy); err != nil {
		t.Fatalf("logits: %v\n%s", err, out)
	}
	checkSameDataPath(t, runDir, ck, npy, 50)
	exported := filepath.Join(dir, "export.safetensors")
	out, err = run(t, "export", "--checkpoint", ck, "--out", exported)
	if err != nil || !strings.Contains(out, "VisionTransformer(img_size=28, patch_size=7, in_chans=1, num_classes=10, embed_dim=16, depth=1, num_heads=2, mlp_ratio=2, qkv_bias=True)") {
		t.Fatalf("export: %v\n%s", err, out)
	}
	f, err := safetensors.ReadFile(exported)
	if err != nil || len(f.Tensors) != len(m.Params) {
		t.Fatalf("exported %d tensors, the model has %d: %v", len(f.Tensors), len(m.Params), err)
	}
}

// TestExportResNet exports a ResNet checkpoint as torchvision's state
// dict (every parameter and running statistic, under its name, with the
// checkpoint's values), then fine-tunes its classifier with EMA.
func TestExportResNet(t *testing.T) {
	dir := t.TempDir()
	if out, err := run(t, "train", "--model", "resnet20", "--out", dir, "--set", "epochs=1", "--set", "data.train_subset=32",
		"--set", "data.batch_size=32", "--set", "data.eval_subset=25", "--set", "data.eval_batch_size=25", "--set", "progress=false"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ck := filepath.Join(dir, "last.safetensors")
	exported := filepath.Join(dir, "resnet.safetensors")
	out, err := run(t, "export", "--checkpoint", ck, "--out", exported)
	if err != nil || !strings.Contains(out, "torchvision") {
		t.Fatalf("export: %v\n%s", err, out)
	}
	c, err := train.LoadCheckpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(exported)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tensors) != len(c.Params) || f.Metadata["format"] != "pt" {
		t.Fatalf("exported %d tensors (metadata %v), the checkpoint has %d", len(f.Tensors), f.Metadata, len(c.Params))
	}
	for i, p := range c.Params {
		e := f.Tensors[i]
		if e.Name != p.Name || !slices.Equal(e.Shape, p.Shape) || !slices.Equal(e.Data, p.Data) {
			t.Fatalf("exported tensor %d is %s %v, the checkpoint's %s %v", i, e.Name, e.Shape, p.Name, p.Shape)
		}
	}
	out, err = run(t, "finetune", "--from", ck, "--out", filepath.Join(dir, "finetuned"), "--freeze", "--ema",
		"--set", "epochs=1", "--set", "data.train_subset=32", "--set", "data.batch_size=32", "--set", "data.eval_subset=25",
		"--set", "data.eval_batch_size=25", "--set", "ema.enabled=true", "--set", "progress=false")
	if err == nil || !strings.Contains(err.Error(), "no EMA weights") {
		t.Fatalf("finetune --ema from a checkpoint without EMA weights: %v\n%s", err, out)
	}
	out, err = run(t, "finetune", "--from", ck, "--out", filepath.Join(dir, "finetuned"), "--freeze",
		"--set", "epochs=1", "--set", "data.train_subset=32", "--set", "data.batch_size=32", "--set", "data.eval_subset=25",
		"--set", "data.eval_batch_size=25", "--set", "ema.enabled=true", "--set", "progress=false")
	if err != nil || !strings.Contains(out, "model resnet20") || !strings.Contains(out, "initialised from "+ck) ||
		!strings.Contains(out, "backbone frozen: training 2 of") {
		t.Fatalf("finetune of a ResNet: %v\n%s", err, out)
	}
}

// TestImportedJAXWithoutPresetFinetunes imports a Google .npz without
// --model, as the README's example does, and fine-tunes and evaluates it
// on a small image folder of its five classes.
func TestImportedJAXWithoutPresetFinetunes(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "images")
	rng := rand.New(rand.NewPCG(1, 2))
	for _, split := range []string{"train", "val"} {
		for c := range 5 {
			folder := filepath.Join(root, split, fmt.Sprintf("class%d", c))
			if err := os.MkdirAll(folder, 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				img := image.NewRGBA(image.Rect(0, 0, 24, 24))
				for j := range img.Pix {
					img.Pix[j] = uint8(rng.IntN(256))
				}
				f, err := os.Create(filepath.Join(folder, fmt.Sprintf("%d.png", i)))
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
	ck := filepath.Join(dir, "ViT-tiny.safetensors")
	if out, err := run(t, "import", "--from", interopGolden+"vit_plain.npz", "--img-size", "24", "--out", ck); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	runDir := filepath.Join(dir, "run")
	out, err := run(t, "finetune", "--from", ck, "--out", runDir, "--set", "epochs=1", "--set", "data.dataset=imagefolder",
		"--set", "data.root="+root, "--set", "data.batch_size=5", "--set", "data.eval_batch_size=5", "--set", "data.workers=1",
		"--set", "progress=false")
	if err != nil || !strings.Contains(out, "model vit_plain") {
		t.Fatalf("finetune: %v\n%s", err, out)
	}
	out, err = run(t, "eval", "--checkpoint", filepath.Join(runDir, "last.safetensors"), "--json")
	if err != nil || !strings.Contains(out, `"n": 10`) {
		t.Fatalf("eval: %v\n%s", err, out)
	}
}
