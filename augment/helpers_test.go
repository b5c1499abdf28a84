package augment

import (
	"math"
	"math/rand/v2"
	"testing"
)

// newRNG returns a deterministic stream for tests.
func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// randomImage returns a (c, h, w) image of uniform values on the 1/255 grid.
func randomImage(rng *rand.Rand, c, h, w int) Image {
	img := Image{C: c, H: h, W: w, Pix: make([]float32, c*h*w)}
	for i := range img.Pix {
		img.Pix[i] = float32(rng.IntN(256)) / 255
	}
	return img
}

// imageFrom builds an image from a function of (c, y, x).
func imageFrom(c, h, w int, f func(c, y, x int) float32) Image {
	img := Image{C: c, H: h, W: w, Pix: make([]float32, c*h*w)}
	for ch := 0; ch < c; ch++ {
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				img.Pix[(ch*h+y)*w+x] = f(ch, y, x)
			}
		}
	}
	return img
}

func at(img Image, c, y, x int) float32 { return img.Pix[(c*img.H+y)*img.W+x] }

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func assertNear(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if !near(got, want, tol) {
		t.Errorf("%s = %.6g, want %.6g (±%g)", what, got, want, tol)
	}
}

// meanStd returns the sample mean and standard deviation.
func meanStd(xs []float64) (mean, std float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(xs)-1))
}
