package jpeg

import (
	"bytes"
	"image"
	stdjpeg "image/jpeg"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode checks that no input makes Decode, RGB at any scale or Std
// panic, that an image image/jpeg decodes whole is decoded (image/jpeg's
// test images and small synthetic ones are the seeds), and that RGB at
// full size then gives image/jpeg's pixels.
func FuzzDecode(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.jpeg")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, b := range synthetic(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := DecodeConfig(b)
		if err != nil || cfg.Width*cfg.Height > 1<<20 {
			return
		}
		m, err := Decode(b)
		if err != nil {
			return
		}
		defer m.Release()
		if m.Components() == 4 {
			m.Std()
			return
		}
		for _, scale := range []int{1, 2, 4, 8} {
			w, h := m.ScaledSize(scale)
			r := image.Rect(w/3, h/4, w, h)
			if r.Empty() {
				r = image.Rect(0, 0, w, h)
			}
			dst := make([]byte, 3*r.Dx()*r.Dy())
			if err := m.RGB(dst, r, scale); err != nil {
				t.Fatalf("RGB(%v, 1/%d) of a %d×%d image: %v", r, scale, w, h, err)
			}
		}
		for i := range m.nComp {
			if !m.progressive && m.comp[i].scans > 1 {
				// A sequential file that repeats a component's blocks in
				// later scans, after redefining the quantisation tables:
				// image/jpeg applies each table to the blocks of its own
				// scan, this package the last table to all of them.
				return
			}
		}
		if want, err := stdjpeg.Decode(bytes.NewReader(b)); err == nil {
			if d := diffImages(m.Std(), want); d != "" {
				t.Errorf("Std differs from image/jpeg's image: %s", d)
			}
		}
	})
}
