package data

import (
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/internal/imagetest"
)

func writePNG(t *testing.T, img image.Image) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.png")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

// evalPipeline is the evaluation pipeline of a size × size model.
func evalPipeline(t *testing.T, size int, cropPct float64, interp augment.Interp, mean, std []float32) *augment.Pipeline {
	t.Helper()
	p, err := augment.EvalPipeline(augment.EvalConfig{Size: size, CropPct: cropPct, Interp: interp, Mean: mean, Std: std})
	if err != nil {
		t.Fatal(err)
	}
	return &p
}

func TestLoadInputPassesModelSizedImagesUnchanged(t *testing.T) {
	g := image.NewGray(image.Rect(0, 0, 28, 28))
	for i := range g.Pix {
		g.Pix[i] = uint8(i * 7)
	}
	dst := make([]float32, 28*28)
	if err := LoadInput(writePNG(t, g), 1, evalPipeline(t, 28, 0.875, augment.Bicubic, []float32{0.5}, []float32{0.25}), dst); err != nil {
		t.Fatal(err)
	}
	for i, v := range dst {
		want := (float64(g.Pix[i])/255 - 0.5) / 0.25
		if math.Abs(float64(v)-want) > 1e-5 {
			t.Fatalf("pixel %d: %v, want %v", i, v, want)
		}
	}
}

func TestLoadInputResizesAndCrops(t *testing.T) {
	// An 80×40 RGB image, left half red, right half blue: the shorter side
	// becomes 36 (72×36), the centre crop 36×36 keeps x in [18, 54) of 72.
	img := image.NewRGBA(image.Rect(0, 0, 80, 40))
	for y := 0; y < 40; y++ {
		for x := 0; x < 80; x++ {
			c := color.RGBA{255, 0, 0, 255}
			if x >= 40 {
				c = color.RGBA{0, 0, 255, 255}
			}
			img.Set(x, y, c)
		}
	}
	const size = 36
	dst := make([]float32, 3*size*size)
	p := evalPipeline(t, size, 1, augment.Bicubic, nil, nil)
	if err := LoadInput(writePNG(t, img), 3, p, dst); err != nil {
		t.Fatal(err)
	}
	red, blue := dst[0:size], dst[2*size*size:2*size*size+size]
	if red[0] < 0.9 || blue[0] > 0.1 || red[size-1] > 0.1 || blue[size-1] < 0.9 {
		t.Fatalf("row 0: red %v, blue %v", red, blue)
	}
	if err := LoadInput(filepath.Join(t.TempDir(), "missing.png"), 3, p, dst); err == nil {
		t.Fatal("want an error for a missing file")
	}
	if err := LoadInput(writePNG(t, img), 3, p, dst[1:]); err == nil {
		t.Fatal("want an error for a buffer of the wrong size")
	}
}

// TestLoadInputIsTheImageFolderItem checks that an image file gives a
// model, bit for bit, what the same file gives it as an item of an image
// folder run through the same evaluation pipeline: JPEG files of odd
// sizes, above and below the model's, with and without a crop.
func TestLoadInputIsTheImageFolderItem(t *testing.T) {
	root := t.TempDir()
	imagetest.JPEGFolder(t, root, "val", [][2]int{{61, 47}, {33, 97}, {129, 71}, {17, 23}}, 2, 7)
	folder, err := OpenImageFolderSplit(root, Test, FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mean, std := ImageNetMeanStd()
	for _, c := range []struct {
		size    int
		cropPct float64
		interp  augment.Interp
	}{{48, 0.875, augment.Bicubic}, {48, 1, augment.Bilinear}, {28, 0.875, augment.Bicubic}} {
		p := evalPipeline(t, c.size, c.cropPct, c.interp, mean, std)
		for i, path := range folder.Files {
			img, _, err := folder.Item(i)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float32, 3*c.size*c.size)
			if err := p.Process(img, nil, want); err != nil {
				t.Fatal(err)
			}
			got := make([]float32, len(want))
			if err := LoadInput(path, 3, p, got); err != nil {
				t.Fatal(err)
			}
			for j := range want {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("%+v, %s: value %d is %g, the folder's item gives %g", c, path, j, got[j], want[j])
				}
			}
		}
	}
}

func TestLoadImageAndNormalize(t *testing.T) {
	pix := func(x, y int) uint8 { return uint8(30*x + 3*y) }
	grey := func(w, h int) *image.Gray {
		g := image.NewGray(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				g.Pix[y*g.Stride+x] = pix(x, y)
			}
		}
		return g
	}
	view := evalPipeline(t, 8, 0.875, augment.Bicubic, nil, nil)
	img, err := LoadImage(writePNG(t, grey(8, 8)), 1, view)
	if err != nil {
		t.Fatal(err)
	}
	if img.C != 1 || img.H != 8 || img.W != 8 {
		t.Fatalf("loaded (%d, %d, %d), want (1, 8, 8)", img.C, img.H, img.W)
	}
	input, err := Normalize(img, []float32{0.5}, []float32{0.25})
	if err != nil {
		t.Fatal(err)
	}
	for y := 0; y < 8; y++ {
		for x := 0; x < 8; x++ {
			v := float64(pix(x, y)) / 255 // an 8×8 image passes unchanged
			if got := float64(img.Pix[y*8+x]); math.Abs(got-v) > 1e-6 {
				t.Fatalf("pixel (%d, %d) = %g, want %g", x, y, got, v)
			}
			if got, want := float64(input[y*8+x]), (v-0.5)/0.25; math.Abs(got-want) > 1e-5 {
				t.Fatalf("input (%d, %d) = %g, want %g", x, y, got, want)
			}
		}
	}
	// A larger, non-square image is resized to the model's size.
	rgb, err := LoadImage(writePNG(t, grey(24, 16)), 3, view)
	if err != nil {
		t.Fatal(err)
	}
	if rgb.C != 3 || rgb.H != 8 || rgb.W != 8 {
		t.Fatalf("loaded (%d, %d, %d), want (3, 8, 8)", rgb.C, rgb.H, rgb.W)
	}
	if _, err := LoadImage(filepath.Join(t.TempDir(), "missing.png"), 1, view); err == nil {
		t.Error("LoadImage read a missing file")
	}
	if _, err := LoadImage(writePNG(t, grey(8, 8)), 1, evalPipeline(t, 8, 0.875, augment.Bicubic, []float32{0.5}, []float32{0.25})); err == nil {
		t.Error("LoadImage took a normalising pipeline")
	}
}
