package main

import (
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/train"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// tinyVizConfig is a tiny distilled ViT: 8×8 grey input, 2×2 patches.
var tinyVizConfig = vit.Config{Name: "tiny", ImageSize: 8, PatchSize: 4, Channels: 1, NumClasses: 3,
	EmbedDim: 8, Depth: 2, Heads: 2, MLPDim: 16, LayerNormEps: 1e-6, QKVBias: true, Distilled: true}

// tinyVizCheckpoint saves tinyVizConfig's ViT with random weights and
// returns its path.
func tinyVizCheckpoint(t *testing.T) string { return vizCheckpoint(t, tinyVizConfig) }

// vizCheckpoint saves a ViT of cfg with random weights and returns its
// path.
func vizCheckpoint(t *testing.T, cfg vit.Config) string {
	t.Helper()
	m, err := vit.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, p := range m.Params {
		for i := range p.Float32s() {
			p.Float32s()[i] = float32(0.5 * rng.NormFloat64())
		}
	}
	path := filepath.Join(t.TempDir(), "tiny.safetensors")
	ck := checkpoint.File{Spec: model.SpecOf(cfg), Mean: []float32{0.5}, Std: []float32{0.25}, Params: m.Tensors()}
	if err := ck.Save(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func decodeVizPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

func TestAttentionAndPosEmbedCommands(t *testing.T) {
	ck := tinyVizCheckpoint(t)
	dir := t.TempDir()
	imgPath := filepath.Join(dir, "shirt.png")
	g := image.NewGray(image.Rect(0, 0, 12, 10))
	for i := range g.Pix {
		g.Pix[i] = uint8(i * 2)
	}
	f, err := os.Create(imgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, g); err != nil {
		t.Fatal(err)
	}
	f.Close()

	out := filepath.Join(dir, "att")
	for _, method := range []string{"rollout", "last"} {
		printed, err := run(t, "attention", "--checkpoint", ck, "--method", method, "--out", out, imgPath)
		if err != nil {
			t.Fatalf("%v\n%s", err, printed)
		}
		want := filepath.Join(out, "shirt-attention.png")
		if strings.TrimSpace(printed) != want {
			t.Fatalf("attention printed %q, want %q", printed, want)
		}
		decodeVizPNG(t, want)
	}
	if _, err := run(t, "attention", "--checkpoint", ck, "--method", "saliency", imgPath); err == nil {
		t.Error("attention accepted --method saliency")
	}
	// A folder stands for its images; pictures of images of one name in
	// two folders do not overwrite each other.
	b, err := os.ReadFile(imgPath)
	if err != nil {
		t.Fatal(err)
	}
	photos := filepath.Join(dir, "photos")
	for _, class := range []string{"cat", "dog"} {
		writeFileAll(t, filepath.Join(photos, class, "shirt.png"), b)
	}
	printed, err := run(t, "attention", "--checkpoint", ck, "--out", out, photos, imgPath)
	if err != nil {
		t.Fatalf("%v\n%s", err, printed)
	}
	want := strings.Join([]string{filepath.Join(out, "cat-shirt-attention.png"), filepath.Join(out, "dog-shirt-attention.png"), filepath.Join(out, filepath.Base(dir)+"-shirt-attention.png")}, "\n")
	if strings.TrimSpace(printed) != want {
		t.Errorf("attention on a folder printed\n%s\nwant\n%s", printed, want)
	}

	pe := filepath.Join(dir, "pos.png")
	if printed, err := run(t, "posembed", "--checkpoint", ck, "--out", pe); err != nil {
		t.Fatalf("%v\n%s", err, printed)
	}
	decodeVizPNG(t, pe)
}

// attention and posembed draw what only a network of tokens has: a
// ResNet's checkpoint is refused in words that say so.
func TestAttentionAndPosEmbedRefuseANetworkWithoutTokens(t *testing.T) {
	ck := randomCheckpoint(t, "resnet20", model.Overrides{Channels: 1, ImageSize: 28, NumClasses: 10})
	img := writeTestPNGs(t, t.TempDir(), 1)[0]
	for _, args := range [][]string{
		{"attention", "--checkpoint", ck, "--out", t.TempDir(), img},
		{"posembed", "--checkpoint", ck, "--out", filepath.Join(t.TempDir(), "pos.png")},
	} {
		_, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), ck) || !strings.Contains(err.Error(), "resnet20 is a resnet, which has no tokens") {
			t.Errorf("%s of a ResNet checkpoint: %v; want an error naming the file and saying it has no tokens", args[0], err)
		}
	}
}

func TestPlotCommand(t *testing.T) {
	dir := t.TempDir()
	if _, err := run(t, "plot", dir); err == nil || !strings.Contains(err.Error(), "no metrics") {
		t.Fatalf("plot of an empty folder: %v", err)
	}
	log, err := metrics.Open(dir, "epochs", nil)
	if err != nil {
		t.Fatal(err)
	}
	for e := 1; e <= 2; e++ {
		if err := log.Write([]metrics.Field{{Name: "epoch", Value: float64(e)}, {Name: "step", Value: float64(10 * e)},
			{Name: "train_loss", Value: 1}, {Name: "val_loss", Value: 1}, {Name: "val_top1", Value: 50}, {Name: "images_per_s", Value: 9}}); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()
	printed, err := run(t, "plot", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, printed)
	}
	// Without steps.jsonl there is no learning-rate chart.
	want := []string{"loss.png", "top1.png", "throughput.png"}
	lines := strings.Fields(printed)
	if len(lines) != len(want) {
		t.Fatalf("plot printed %q, want %v", printed, want)
	}
	for i, w := range want {
		if lines[i] != filepath.Join(dir, w) {
			t.Errorf("file %d = %s, want %s", i, lines[i], w)
		}
		decodeVizPNG(t, lines[i])
	}
}

// TestEveryEntranceRunsTheCheckpointsPrecision saves a tiny ViT whose run
// configuration says model.precision=mixed and checks that every command
// that runs it opens it in that precision, attention included: where the
// processor has no low-precision product each one refuses, naming the
// setting; where it has one, the network attention draws with runs it.
func TestEveryEntranceRunsTheCheckpointsPrecision(t *testing.T) {
	// An MLP of 64: fc2's products have the fewest steps (64) that run in
	// low precision.
	wide := tinyVizConfig
	wide.MLPDim = 64
	ck, err := train.LoadCheckpoint(vizCheckpoint(t, wide))
	if err != nil {
		t.Fatal(err)
	}
	cfg := train.DefaultConfig()
	cfg.Model.Precision = "mixed"
	ck.Config = &cfg
	path := filepath.Join(t.TempDir(), "mixed.safetensors")
	if err := ck.Save(path); err != nil {
		t.Fatal(err)
	}
	img := writeTestPNGs(t, t.TempDir(), 1)[0]
	if !blas.Mixed().IsFP32() {
		// The network attention draws with (train.OpenNetwork's) runs
		// other products than the same checkpoint opened in fp32.
		fp32 := cfg.Model
		fp32.Precision = "fp32"
		input := make([]float32, 8*8)
		for i := range input {
			input[i] = float32(i%7) - 3
		}
		logits := func(o train.NetworkOptions) []float32 {
			_, n, err := train.OpenNetwork(path, o)
			if err != nil {
				t.Fatal(err)
			}
			g, err := n.Graph(1, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			copy(g.ImageData.([]float32), input)
			if err := g.Run(); err != nil {
				t.Fatal(err)
			}
			return g.Predictions(nil)
		}
		if mixed, full := logits(train.NetworkOptions{}), logits(train.NetworkOptions{Model: &fp32}); slices.Equal(mixed, full) {
			t.Errorf("attention's network gives the fp32 logits %v: it does not run the checkpoint's %s products", full, blas.Mixed())
		}
		if out, err := run(t, "attention", "--checkpoint", path, "--out", t.TempDir(), img); err != nil {
			t.Fatalf("attention: %v\n%s", err, out)
		}
		return
	}
	for _, args := range [][]string{
		{"attention", "--checkpoint", path, "--out", t.TempDir(), img},
		{"predict", "--checkpoint", path, img},
		{"eval", "--checkpoint", path, "--out", t.TempDir()},
		{"logits", "--checkpoint", path, "--out", filepath.Join(t.TempDir(), "l.npy")},
	} {
		if _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), "model.precision = mixed") {
			t.Errorf("%s on a processor without a low-precision product: %v; want the precision's error", args[0], err)
		}
	}
}

// TestPictureNames checks that pictures of files of one name are told
// apart by their folders, and numbered where those repeat too.
func TestPictureNames(t *testing.T) {
	got := pictureNames([]string{"a/x.jpg", "b/x.png", "c/y.jpg", "a/x.jpg", "a-x.jpg", "d/a-x-2.png"})
	want := []string{"a-x", "b-x", "y", "a-x-2", "a-x-3", "a-x-2-2"}
	if !slices.Equal(got, want) {
		t.Errorf("pictureNames: %q, want %q", got, want)
	}
}
