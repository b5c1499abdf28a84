package data

import (
	"bytes"
	"image"
	"image/jpeg"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/augment"
)

// FuzzJPEGSource checks that no file makes the decoders panic, that
// every error names the file, and that an image that decodes crops,
// resizes (at every JPEG reduction the crop allows) and converts whole.
// The seeds are JPEGs of every chroma subsampling, progressive, grey and
// CMYK ones (Go's image/testdata, where the Go source is installed), and
// small JPEGs and PNGs made here.
func FuzzJPEGSource(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", "image", "testdata", "video-00*.jpeg"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, q := range []int{50, 95} {
		var b bytes.Buffer
		if err := jpeg.Encode(&b, patternRGBA(37, 21), &jpeg.Options{Quality: q}); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	var pb bytes.Buffer
	grey := image.NewGray(image.Rect(0, 0, 5, 3))
	if err := jpeg.Encode(&pb, grey, nil); err != nil {
		f.Fatal(err)
	}
	f.Add(pb.Bytes())
	const name = "fuzz/item.jpg"
	crops := []augment.RandomResizedCrop{augment.NewRandomResizedCrop(16, augment.Bicubic), augment.NewRandomResizedCrop(3, augment.Bilinear)}
	f.Fuzz(func(t *testing.T, b []byte) {
		src, err := decodeSource(b, name, 1<<20, 3)
		if err != nil {
			if !strings.Contains(err.Error(), name) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		defer src.Release()
		c, h, w := src.Size()
		if c != 3 || h <= 0 || w <= 0 {
			t.Fatalf("size (%d, %d, %d)", c, h, w)
		}
		for seed := range uint64(3) {
			for _, rrc := range crops {
				out := rrc.ApplySource(src, rand.New(rand.NewPCG(seed, 1)))
				if out.C != 3 || out.H != rrc.H || out.W != rrc.W {
					t.Fatalf("crop gave (%d, %d, %d)", out.C, out.H, out.W)
				}
				augment.Recycle(out)
			}
		}
		img := augment.Whole(src)
		if img.C != 3 || img.H != h || img.W != w || len(img.Pix) != 3*h*w {
			t.Fatalf("whole image (%d, %d, %d), %d values, want (3, %d, %d)", img.C, img.H, img.W, len(img.Pix), h, w)
		}
		augment.Recycle(img)
	})
}
