// Package imagetest writes image folders for tests: ImageNet-style class
// folders of JPEG files of given sizes, whose smooth colour gradients and
// noise make every resize filter and crop give other pixels.
package imagetest

import (
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// JPEGFolder writes one JPEG file of each width×height of sizes into
// root/split/class<k>, the files taking the classes 0…classes−1 in turn,
// their noise drawn from seed. It returns the paths written.
func JPEGFolder(t testing.TB, root, split string, sizes [][2]int, classes int, seed uint64) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed+1))
	var paths []string
	for i, wh := range sizes {
		dir := filepath.Join(root, split, fmt.Sprintf("class%d", i%classes))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		w, h := wh[0], wh[1]
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				img.Set(x, y, color.RGBA{uint8(255 * x / w), uint8(255 * y / h), uint8(rng.IntN(256)), 255})
			}
		}
		path := filepath.Join(dir, fmt.Sprintf("img%d.jpg", i))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		err = jpeg.Encode(f, img, &jpeg.Options{Quality: 85})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}
