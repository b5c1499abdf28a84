package augment

import (
	"slices"
	"testing"
)

// TestAffineBicubicRowMatchesPixels checks that affineLevels gives the
// same levels with the four-pixel kernel (where the processor has one) as
// with affinePixels alone: RandAugment's rotations, shears and
// translations of both signs, random matrices, positions on the pixel
// grid (dx or dy 0), shifts along both axes, one and three channels, widths that are not
// multiples of 4, and images smaller than the taps.
func TestAffineBicubicRowMatchesPixels(t *testing.T) {
	if affineBicubicRow == nil {
		t.Skip("no bicubic affine kernel on this processor")
	}
	checkAffineKernel(t)
}

// checkAffineKernel runs TestAffineBicubicRowMatchesPixels's cases on the
// kernel affineBicubicRow holds.
func checkAffineKernel(t *testing.T) {
	t.Helper()
	rng := newRNG(31)
	for _, size := range [][3]int{{3, 37, 53}, {1, 20, 4}, {3, 5, 7}, {3, 2, 9}, {1, 64, 64}, {3, 3, 3}, {3, 19, 8}, {2, 11, 17}} {
		c, h, w := size[0], size[1], size[2]
		src := toLevels(randomImage(rng, c, h, w))
		fill := []uint8{124, 116, 104}[:c]
		ms := [][6]float64{
			rotateMatrix(h, w, 27), rotateMatrix(h, w, -13.7), rotateMatrix(h, w, 90), rotateMatrix(h, w, 0),
			{1, 0.27, 0, 0, 1, 0}, {1, -0.3, 0, 0, 1, 0}, {1, 0, 0, 0.27, 1, 0}, {1, 0, 0, -0.11, 1, 0},
			{1, 0, 0.405 * float64(w), 0, 1, 0}, {1, 0, -3.3, 0, 1, 0}, {1, 0, 0, 0, 1, -0.405 * float64(h)}, {1, 0, 0, 0, 1, 2.5},
			{1, 0, 2, 0, 1, -1}, {1, 0, 2.3, 0, 1, 1.7}, {1, 0, -5.6, 0, 1, -0.4},
		}
		for range 20 {
			var m [6]float64
			for i := range m {
				m[i] = rng.Float64()*2 - 1
			}
			m[2] *= float64(w)
			m[5] *= float64(h)
			ms = append(ms, m)
		}
		for _, m := range ms {
			got := affineLevels(src, m, Bicubic, fill)
			kernel := affineBicubicRow
			affineBicubicRow = nil
			want := affineLevels(src, m, Bicubic, fill)
			affineBicubicRow = kernel
			if !slices.Equal(got.Pix, want.Pix) {
				for i := range got.Pix {
					if got.Pix[i] != want.Pix[i] {
						t.Fatalf("(%d, %d, %d), matrix %v: value %d is %d, one pixel at a time %d", c, h, w, m, i, got.Pix[i], want.Pix[i])
					}
				}
			}
			recycleBytes(got)
			recycleBytes(want)
		}
	}
}

// TestFloatLevelsMatchesGeneric checks that floatLevels (the AVX2 version
// where the processor has it) gives floatLevelsGeneric's values for every
// level and every length up to 40.
func TestFloatLevelsMatchesGeneric(t *testing.T) {
	rng := newRNG(32)
	for n := range 41 {
		src := make([]uint8, n)
		for i := range src {
			src[i] = uint8(rng.IntN(256))
		}
		if n == 0 {
			src = make([]uint8, 256)
			for i := range src {
				src[i] = uint8(i)
			}
		}
		want, got := make([]float32, len(src)), make([]float32, len(src))
		floatLevelsGeneric(want, src)
		floatLevels(got, src)
		if !slices.Equal(got, want) {
			t.Fatalf("levels %v: got %v, want %v", src, got, want)
		}
		for i, l := range src {
			if want[i] != float32(l) {
				t.Fatalf("level %d: %v", l, want[i])
			}
		}
	}
}
