package jpeg

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	stdjpeg "image/jpeg"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// testFiles returns the test files: image/jpeg's test images and, when it
// has been made (scripts/make_photo_set.py), the photo set.
func testFiles(t testing.TB) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	paths, _ := filepath.Glob("testdata/*.jpeg")
	photos := os.Getenv("VIT_TRAIN_PHOTOS")
	if photos == "" {
		photos = filepath.Join("..", "..", "datasets", "photos")
	}
	more, _ := filepath.Glob(filepath.Join(photos, "*", "*", "*.jpg"))
	for _, p := range append(paths, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = b
	}
	if len(paths) == 0 {
		t.Fatal("no test files in testdata")
	}
	return files
}

// synthetic returns JPEGs that image/jpeg encodes: smooth gradients with
// noise, colour and grey, of sizes that are and are not multiples of the
// MCU, at several qualities.
func synthetic(t testing.TB) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, size := range [][2]int{{1, 1}, {7, 9}, {16, 16}, {33, 17}, {100, 75}, {257, 130}} {
		w, h := size[0], size[1]
		rgba := image.NewRGBA(image.Rect(0, 0, w, h))
		grey := image.NewGray(rgba.Rect)
		for y := range h {
			for x := range w {
				n := uint8(rng.IntN(40))
				rgba.SetRGBA(x, y, color.RGBA{uint8(x*255/w) + n, uint8(y*255/h) - n, uint8((x+y)*3) ^ n, 255})
				grey.SetGray(x, y, color.Gray{uint8(x*y) + n})
			}
		}
		for _, q := range []int{10, 75, 100} {
			for name, m := range map[string]image.Image{"rgb": rgba, "grey": grey} {
				var buf bytes.Buffer
				if err := stdjpeg.Encode(&buf, m, &stdjpeg.Options{Quality: q}); err != nil {
					t.Fatal(err)
				}
				files[fmt.Sprintf("synthetic %s %dx%d q%d", name, w, h, q)] = buf.Bytes()
			}
		}
	}
	return files
}

// TestStdMatchesImageJPEG checks that Std gives image/jpeg's image, pixel
// for pixel, and DecodeConfig its configuration, on every test file.
func TestStdMatchesImageJPEG(t *testing.T) {
	files := testFiles(t)
	for k, v := range synthetic(t) {
		files[k] = v
	}
	for name, b := range files {
		want, wantErr := stdjpeg.Decode(bytes.NewReader(b))
		m, err := Decode(b)
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v, image/jpeg's %v", name, err, wantErr)
			continue
		}
		wantCfg, _ := stdjpeg.DecodeConfig(bytes.NewReader(b))
		if cfg, err := DecodeConfig(b); err != nil || cfg != wantCfg {
			t.Errorf("%s: config %v (%v), image/jpeg's %v", name, cfg, err, wantCfg)
		}
		if err != nil {
			continue
		}
		got := m.Std()
		if d := diffImages(got, want); d != "" {
			t.Errorf("%s: %s", name, d)
		}
		m.Release()
	}
}

// diffImages describes the first difference between two images, of the
// same type and size.
func diffImages(got, want image.Image) string {
	if fmt.Sprintf("%T", got) != fmt.Sprintf("%T", want) || got.Bounds() != want.Bounds() {
		return fmt.Sprintf("%T %v, want %T %v", got, got.Bounds(), want, want.Bounds())
	}
	r := want.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if g, w := got.At(x, y), want.At(x, y); g != w {
				return fmt.Sprintf("pixel (%d, %d) = %v, want %v", x, y, g, w)
			}
		}
	}
	return ""
}

// stdRGB returns image/jpeg's decoding of b as planar RGB bytes over r,
// converted with image/color.
func stdRGB(t testing.TB, b []byte, r image.Rectangle) []byte {
	t.Helper()
	m, err := stdjpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	n := r.Dx() * r.Dy()
	out := make([]byte, 3*n)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			var cr, cg, cb uint8
			switch p := m.At(x, y).(type) {
			case color.YCbCr:
				cr, cg, cb = color.YCbCrToRGB(p.Y, p.Cb, p.Cr)
			case color.Gray:
				cr, cg, cb = p.Y, p.Y, p.Y
			case color.RGBA:
				cr, cg, cb = p.R, p.G, p.B
			default:
				t.Fatalf("%T pixel", p)
			}
			k := (y-r.Min.Y)*r.Dx() + x - r.Min.X
			out[k], out[n+k], out[2*n+k] = cr, cg, cb
		}
	}
	return out
}

// TestRGBMatchesImageJPEG checks RGB at full size against image/jpeg's
// image converted by image/color, over the whole image and over random
// rectangles: the same bytes.
func TestRGBMatchesImageJPEG(t *testing.T) {
	files := testFiles(t)
	for k, v := range synthetic(t) {
		files[k] = v
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for name, b := range files {
		m, err := Decode(b)
		if err != nil || m.Components() == 4 {
			continue
		}
		w, h := m.ScaledSize(1)
		rects := []image.Rectangle{image.Rect(0, 0, w, h)}
		for range 4 {
			x0, y0 := rng.IntN(w), rng.IntN(h)
			rects = append(rects, image.Rect(x0, y0, x0+1+rng.IntN(w-x0), y0+1+rng.IntN(h-y0)))
		}
		for _, r := range rects {
			got := make([]byte, 3*r.Dx()*r.Dy())
			if err := m.RGB(got, r, 1); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if want := stdRGB(t, b, r); !bytes.Equal(got, want) {
				t.Errorf("%s: rectangle %v differs from image/jpeg's", name, r)
			}
		}
		m.Release()
	}
}

// TestErrors checks that bad arguments to RGB are errors and that the
// truncated test file is one, as image/jpeg finds it.
func TestErrors(t *testing.T) {
	b, err := os.ReadFile("testdata/video-001.q50.420.jpeg")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	w, h := m.ScaledSize(1)
	dst := make([]byte, 3*w*h)
	for _, c := range []struct {
		r     image.Rectangle
		scale int
	}{{image.Rect(0, 0, w+1, h), 1}, {image.Rect(0, 0, w, h), 3}, {image.Rect(0, 0, w, h), 2}, {image.Rect(2, 2, 2, 5), 1}} {
		if err := m.RGB(dst, c.r, c.scale); err == nil {
			t.Errorf("RGB(%v, 1/%d) of a %d×%d image: no error", c.r, c.scale, w, h)
		}
	}
	for _, cut := range []int{0, 1, 2, 100, len(b) / 2, len(b) - 2} {
		if _, err := Decode(b[:cut]); err == nil {
			t.Errorf("the file cut at %d bytes: no error", cut)
		}
	}
}
