package data

import (
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
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

func TestLoadInputPassesModelSizedImagesUnchanged(t *testing.T) {
	g := image.NewGray(image.Rect(0, 0, 28, 28))
	for i := range g.Pix {
		g.Pix[i] = uint8(i * 7)
	}
	dst := make([]float32, 28*28)
	if err := LoadInput(writePNG(t, g), 1, 28, []float32{0.5}, []float32{0.25}, dst); err != nil {
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
	// A 40×20 RGB image, left half red, right half blue: the shorter side
	// becomes 8 (16×8), the centre crop 8×8 keeps the middle.
	img := image.NewRGBA(image.Rect(0, 0, 40, 20))
	for y := 0; y < 20; y++ {
		for x := 0; x < 40; x++ {
			c := color.RGBA{255, 0, 0, 255}
			if x >= 20 {
				c = color.RGBA{0, 0, 255, 255}
			}
			img.Set(x, y, c)
		}
	}
	dst := make([]float32, 3*8*8)
	if err := LoadInput(writePNG(t, img), 3, 8, nil, nil, dst); err != nil {
		t.Fatal(err)
	}
	red, blue := dst[0:64], dst[128:192]
	if red[0] < 0.9 || blue[0] > 0.1 || red[7] > 0.1 || blue[7] < 0.9 {
		t.Fatalf("row 0: red %v, blue %v", red[:8], blue[:8])
	}
	if err := LoadInput(filepath.Join(t.TempDir(), "missing.png"), 3, 8, nil, nil, dst); err == nil {
		t.Fatal("want an error for a missing file")
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
	img, err := LoadImage(writePNG(t, grey(8, 8)), 8, 1)
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
	// A larger, non-square image is resized and cropped to the model's size.
	rgb, err := LoadImage(writePNG(t, grey(24, 16)), 8, 3)
	if err != nil {
		t.Fatal(err)
	}
	if rgb.C != 3 || rgb.H != 8 || rgb.W != 8 {
		t.Fatalf("loaded (%d, %d, %d), want (3, 8, 8)", rgb.C, rgb.H, rgb.W)
	}
	if _, err := LoadImage(filepath.Join(t.TempDir(), "missing.png"), 8, 1); err == nil {
		t.Error("LoadImage read a missing file")
	}
}
