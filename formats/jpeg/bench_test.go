package jpeg

import (
	"bytes"
	"image"
	stdjpeg "image/jpeg"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDecode times decoding the photo set's JPEGs (when made, by
// scripts/make_photo_set.py; image/jpeg's test images otherwise):
// "image-jpeg" is image/jpeg's
// Decode, "rgb" Decode then RGB of the whole image at full size (planar
// uint8 RGB, colour converted, which image/jpeg's YCbCr image is not yet),
// "rgb-half" RGB of the centre quarter of the area (what a crop reads).
func BenchmarkDecode(b *testing.B) {
	files := testFiles(b)
	var names, photos []string
	for n, data := range files {
		if m, err := Decode(data); err == nil && m.Components() != 4 {
			names = append(names, n)
			if strings.HasSuffix(n, ".jpg") {
				photos = append(photos, n)
			}
		}
	}
	if len(photos) > 0 {
		names = photos
	}
	sort.Strings(names)
	run := func(b *testing.B, f func(data []byte)) {
		b.ReportAllocs()
		cpu0 := cpuTime()
		for i := range b.N {
			f(files[names[i%len(names)]])
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/image")
	}
	b.Run("image-jpeg", func(b *testing.B) {
		run(b, func(data []byte) {
			if _, err := stdjpeg.Decode(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		})
	})
	var buf []byte
	for _, c := range []struct {
		name string
		part func(w, h int) image.Rectangle
	}{
		{"rgb", func(w, h int) image.Rectangle { return image.Rect(0, 0, w, h) }},
		{"rgb-half", func(w, h int) image.Rectangle {
			return image.Rect(w/4, h/4, w/4+w/2, h/4+h/2).Union(image.Rect(w/4, h/4, w/4+1, h/4+1))
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			run(b, func(data []byte) {
				m, err := Decode(data)
				if err != nil {
					b.Fatal(err)
				}
				w, h := m.ScaledSize(1)
				r := c.part(w, h)
				if n := 3 * r.Dx() * r.Dy(); cap(buf) < n {
					buf = make([]byte, n)
				}
				if err := m.RGB(buf[:3*r.Dx()*r.Dy()], r, 1); err != nil {
					b.Fatal(err)
				}
				m.Release()
			})
		})
	}
}
