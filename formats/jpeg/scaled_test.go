package jpeg

import (
	"image"
	"math"
	"testing"
)

// Tolerance of the reduced scales against the full-size image averaged
// over the same squares, in 8-bit levels: the mean absolute difference
// over an image's samples, and the largest. Grey images and colour ones
// whose chroma is subsampled alike across and down (4:4:4, 4:2:0) differ
// by the rounding alone (each square's mean rounded once instead of each
// pixel) and the clipping of pixels outside [0, 255]. Other subsamplings
// (4:2:2, 4:4:0, 4:1:1, 4:1:0) average the chroma over a rectangle other
// than the output pixel's square, as libjpeg's scaled IDCT does.
const (
	scaledMeanTol, scaledMaxTol       = 1.5, 64.0
	scaledMeanTolOdd, scaledMaxTolOdd = 8.0, 96.0
)

// TestScaledMatchesAveragedFullSize checks RGB at 1/2, 1/4 and 1/8
// against the full-size RGB averaged over each 2×2, 4×4 or 8×8 square
// (squares cut by the image's edge averaged over their part).
func TestScaledMatchesAveragedFullSize(t *testing.T) {
	for name, b := range testFiles(t) {
		m, err := Decode(b)
		if err != nil || m.Components() == 4 {
			continue
		}
		W, H := m.ScaledSize(1)
		full := make([]byte, 3*W*H)
		if err := m.RGB(full, image.Rect(0, 0, W, H), 1); err != nil {
			t.Fatal(err)
		}
		for _, s := range []int{2, 4, 8} {
			w, h := m.ScaledSize(s)
			got := make([]byte, 3*w*h)
			if err := m.RGB(got, image.Rect(0, 0, w, h), s); err != nil {
				t.Fatal(err)
			}
			var sum, worst float64
			for c := range 3 {
				for y := range h {
					for x := range w {
						var acc, n float64
						for yy := y * s; yy < min((y+1)*s, H); yy++ {
							for xx := x * s; xx < min((x+1)*s, W); xx++ {
								acc += float64(full[(c*H+yy)*W+xx])
								n++
							}
						}
						d := math.Abs(float64(got[(c*h+y)*w+x]) - acc/n)
						sum += d
						worst = max(worst, d)
					}
				}
			}
			mean := sum / float64(3*w*h)
			meanTol, maxTol := scaledMeanTol, scaledMaxTol
			if m.nComp == 3 && m.comp[1].h*m.vMax != m.comp[1].v*m.hMax {
				meanTol, maxTol = scaledMeanTolOdd, scaledMaxTolOdd
			}
			if mean > meanTol || worst > maxTol {
				t.Errorf("%s at 1/%d: mean difference %.2f (tolerance %v), largest %.1f (tolerance %v)", name, s, mean, meanTol, worst, maxTol)
			}
			if testing.Verbose() {
				t.Logf("%s at 1/%d: mean %.2f largest %.1f", name, s, mean, worst)
			}
		}
		m.Release()
	}
}
