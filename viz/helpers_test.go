package viz_test

import (
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/train/checkpoint"
	"github.com/vit-train/vit-train/viz"
)

// decodePNG decodes a PNG file and checks its size in pixels.
func decodePNG(t *testing.T, path string, w, h int) image.Image {
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
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("%s is %dx%d pixels, want %dx%d", path, b.Dx(), b.Dy(), w, h)
	}
	return img
}

// pixels is the size in pixels of inches at viz.DPI, rounded as gonum's
// image canvas does.
func pixels(inches float64) int { return int(inches*viz.DPI + 0.5) }

// tinyConfig is a ViT small enough for tests: 8×8 grey images in 4×4
// patches (a 2×2 grid), 2 blocks of 2 heads.
func tinyConfig(distilled bool) vit.Config {
	return vit.Config{Name: "tiny", ImageSize: 8, PatchSize: 4, Channels: 1, NumClasses: 3,
		EmbedDim: 8, Depth: 2, Heads: 2, MLPDim: 16, LayerNormEps: 1e-6, QKVBias: true, Distilled: distilled}
}

// tinyCheckpoint saves a tiny model with large random weights (so that its
// attention is far from uniform) as a checkpoint and returns its path.
func tinyCheckpoint(t *testing.T, distilled bool) string {
	t.Helper()
	cfg := tinyConfig(distilled)
	m, err := vit.New(cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, p := range m.Params {
		for i := range p.Float32s() {
			p.Float32s()[i] = float32(0.7 * rng.NormFloat64())
		}
	}
	path := filepath.Join(t.TempDir(), "tiny.safetensors")
	ck := checkpoint.File{Spec: model.SpecOf(cfg), Mean: []float32{0.5}, Std: []float32{0.25},
		Classes: []string{"zero", "one", "two"}, Params: m.Tensors()}
	if err := ck.Save(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeGreyPNG writes a w×h grey PNG whose pixel (x, y) is pix(x, y).
func writeGreyPNG(t *testing.T, path string, w, h int, pix func(x, y int) uint8) {
	t.Helper()
	g := image.NewGray(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			g.Pix[y*g.Stride+x] = pix(x, y)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, g); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
