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
