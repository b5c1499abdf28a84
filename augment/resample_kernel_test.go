package augment

import (
	"slices"
	"testing"
)

// TestVerticalTapsMatchesGeneric checks that verticalTaps (the AVX2
// version where the processor has it) gives verticalTapsGeneric's values
// for every row length up to 80 and tap count up to 12, values and
// weights of both signs, sums clamped at both ends.
func TestVerticalTapsMatchesGeneric(t *testing.T) {
	rng := newRNG(9)
	for n := range 80 {
		for taps := 1; taps <= 12; taps++ {
			stride := n + rng.IntN(5)
			src := make([]float32, taps*stride+n)
			for i := range src {
				src[i] = rng.Float32()*1.4 - 0.2
			}
			w := make([]float32, taps)
			for i := range w {
				w[i] = rng.Float32()*0.8 - 0.2
			}
			want, got := make([]float32, n), make([]float32, n)
			verticalTapsGeneric(want, src, stride, w)
			verticalTaps(got, src, stride, w)
			if !slices.Equal(got, want) {
				t.Fatalf("%d values, %d taps: got %v, want %v", n, taps, got, want)
			}
		}
	}
}

// TestHorizontalTaps8MatchesScalar checks that horizontalRows gives the
// same values with the eight-row kernel (where the processor has one) as
// with the scalar code alone, for downscaling and upscaling, both filters,
// flipped or not, and row and column counts that are not multiples of 8.
func TestHorizontalTaps8MatchesScalar(t *testing.T) {
	if horizontalTaps8 == nil {
		t.Skip("no eight-row kernel on this processor")
	}
	rng := newRNG(11)
	for _, c := range []struct{ ch, cw, outW int }{{8, 40, 8}, {17, 375, 224}, {9, 100, 224}, {16, 61, 30}, {24, 224, 13}, {7, 50, 16}} {
		img := randomImage(rng, 2, c.ch, c.cw)
		read := floatRows{src: img, cw: c.cw}
		for _, interp := range []Interp{Bilinear, Bicubic} {
			co := computeCoeffsBox(c.cw, 0.3, float64(c.cw)-0.6, c.outW, interp)
			for _, flip := range []bool{false, true} {
				got := horizontalRows(read, 2, c.ch, c.cw, c.outW, co, false, flip)
				kernel := horizontalTaps8
				horizontalTaps8 = nil
				want := horizontalRows(read, 2, c.ch, c.cw, c.outW, co, false, flip)
				horizontalTaps8 = kernel
				if !slices.Equal(got.Pix, want.Pix) {
					t.Fatalf("%v, %v, flip %v: the eight-row kernel differs from the scalar code", c, interp, flip)
				}
			}
		}
	}
}
