package augment

import (
	"math"
	"testing"
)

// With rejections impossible (every crop fits), RandomResizedCrop's area
// fraction is uniform on Scale and its log aspect ratio uniform on
// log(Ratio): check moments and bounds.
func TestRRCParamsDistribution(t *testing.T) {
	rng := newRNG(4)
	const n = 20000
	H, W := 1000, 1000
	scale, ratio := [2]float64{0.08, 0.5}, [2]float64{3. / 4, 4. / 3}
	var areas, logRatios []float64
	for range n {
		top, left, h, w := rrcParams(H, W, scale, ratio, rng)
		if top < 0 || left < 0 || top+h > H || left+w > W {
			t.Fatalf("crop (%d,%d,%d,%d) outside %dx%d", top, left, h, w, H, W)
		}
		a := float64(h*w) / float64(H*W)
		r := float64(w) / float64(h)
		if a < 0.08-0.005 || a > 0.5+0.005 || r < 0.75-0.01 || r > 4./3+0.01 {
			t.Fatalf("area %.4f ratio %.4f outside the ranges", a, r)
		}
		areas = append(areas, a)
		logRatios = append(logRatios, math.Log(r))
	}
	m, s := meanStd(areas)
	assertNear(t, "area mean", m, (0.08+0.5)/2, 0.005)
	assertNear(t, "area std", s, (0.5-0.08)/math.Sqrt(12), 0.005)
	m, s = meanStd(logRatios)
	span := math.Log(4./3) - math.Log(3./4)
	assertNear(t, "log-ratio mean", m, 0, 0.005)
	assertNear(t, "log-ratio std", s, span/math.Sqrt(12), 0.005)
}

// The default scale range (0.08, 1) on a 500x375 image: crops stay inside,
// areas fall in range, and the fallback is never needed for such images.
func TestRRCParamsDefaultRangeInside(t *testing.T) {
	rng := newRNG(5)
	below := 0
	for range 5000 {
		top, left, h, w := rrcParams(375, 500, [2]float64{0.08, 1}, [2]float64{3. / 4, 4. / 3}, rng)
		if top < 0 || left < 0 || top+h > 375 || left+w > 500 || h <= 0 || w <= 0 {
			t.Fatalf("crop (%d,%d,%d,%d) outside", top, left, h, w)
		}
		a := float64(h*w) / (375 * 500)
		if a < 0.079 || a > 1 {
			t.Fatalf("area fraction %.4f", a)
		}
		if a < 0.5 {
			below++
		}
	}
	// Large crops are rejected more often, so more than half the areas fall
	// below the midpoint 0.54 of the range; far from all.
	if below < 2500 || below > 4500 {
		t.Errorf("%d of 5000 crops below half the area", below)
	}
}

// A crop of the whole image (scale 1, ratio equal to the image's) resized
// to the same size returns the image.
func TestRandomResizedCropWholeImage(t *testing.T) {
	src := randomImage(newRNG(6), 3, 20, 30)
	rrc := RandomResizedCrop{H: 20, W: 30, Scale: [2]float64{1, 1}, Ratio: [2]float64{1.5, 1.5}, Interp: Bicubic}
	out := rrc.Apply(src.Clone(), newRNG(1))
	for i := range src.Pix {
		if out.Pix[i] != src.Pix[i] {
			t.Fatalf("value %d: %v, want %v", i, out.Pix[i], src.Pix[i])
		}
	}
}

// Small images fall back to a centred crop clamped to the ratio range.
func TestRRCParamsFallback(t *testing.T) {
	// A 1x10 image cannot host any crop of ratio <= 4/3 and area >= 8% ...
	top, left, h, w := rrcParams(1, 10, [2]float64{0.9, 1}, [2]float64{3. / 4, 4. / 3}, newRNG(7))
	// ... so the fallback takes h = 1 and w = round(1 * 4/3) = 1, centred.
	if top != 0 || h != 1 || w != 1 || left != 4 {
		t.Errorf("fallback crop (%d,%d,%d,%d), want (0,4,1,1)", top, left, h, w)
	}
}

// RandomCrop with padding 4 shifts the image by an offset uniform in
// [-4, 4] in each direction and fills the rest with zeros.
func TestRandomCropPadding(t *testing.T) {
	src := imageFrom(1, 8, 8, func(_, y, x int) float32 { return float32(1+8*y+x) / 100 })
	rng := newRNG(8)
	counts := map[[2]int]int{}
	for range 9000 {
		out := RandomCrop{H: 8, W: 8, Padding: 4}.Apply(src.Clone(), rng)
		// find the shift from any non-zero pixel
		dy, dx, found := 0, 0, false
		for y := 0; y < 8 && !found; y++ {
			for x := 0; x < 8 && !found; x++ {
				if v := at(out, 0, y, x); v != 0 {
					k := int(math.Round(float64(v)*100)) - 1
					dy, dx, found = k/8-y, k%8-x, true
				}
			}
		}
		if !found {
			t.Fatal("crop holds no image pixel")
		}
		for y := 0; y < 8; y++ {
			for x := 0; x < 8; x++ {
				sy, sx := y+dy, x+dx
				want := float32(0)
				if sy >= 0 && sy < 8 && sx >= 0 && sx < 8 {
					want = at(src, 0, sy, sx)
				}
				if at(out, 0, y, x) != want {
					t.Fatalf("shift (%d,%d): pixel (%d,%d) = %v, want %v", dy, dx, y, x, at(out, 0, y, x), want)
				}
			}
		}
		counts[[2]int{dy, dx}]++
	}
	if len(counts) != 81 {
		t.Errorf("%d distinct shifts, want 81", len(counts))
	}
	for k, c := range counts {
		if k[0] < -4 || k[0] > 4 || k[1] < -4 || k[1] > 4 || c < 60 || c > 170 {
			t.Errorf("shift %v drawn %d times (expected about 111)", k, c)
		}
	}
}

func TestHFlipHalfTheTime(t *testing.T) {
	src := imageFrom(2, 3, 5, func(c, y, x int) float32 { return float32(c*100+y*10+x) / 255 })
	rng := newRNG(9)
	flipped := 0
	const n = 10000
	for range n {
		out := HFlip{P: 0.5}.Apply(src.Clone(), rng)
		isFlip := at(out, 0, 0, 0) == at(src, 0, 0, 4)
		for c := 0; c < 2; c++ {
			for y := 0; y < 3; y++ {
				for x := 0; x < 5; x++ {
					sx := x
					if isFlip {
						sx = 4 - x
					}
					if at(out, c, y, x) != at(src, c, y, sx) {
						t.Fatalf("pixel (%d,%d,%d) not a (mirrored) copy", c, y, x)
					}
				}
			}
		}
		if isFlip {
			flipped++
		}
	}
	// binomial(10000, 0.5): std 50
	if flipped < n/2-250 || flipped > n/2+250 {
		t.Errorf("flipped %d of %d", flipped, n)
	}
}

// Rotation by 90 degrees maps pixel centres onto pixel centres:
// counter-clockwise, out(y, x) = in(x, n-1-y).
func TestRotate90(t *testing.T) {
	n := 6
	src := randomImage(newRNG(10), 2, n, n)
	for _, interp := range []Interp{Bilinear, Bicubic} {
		out := affine(src, rotateMatrix(n, n, 90), interp, []float32{0, 0})
		for c := 0; c < 2; c++ {
			for y := 0; y < n; y++ {
				for x := 0; x < n; x++ {
					assertNear(t, "rot90", float64(at(out, c, y, x)), float64(at(src, c, x, n-1-y)), 1e-5)
				}
			}
		}
	}
}

// PIL's translate (1, 0, px, 0, 1, 0) reads the source px pixels to the
// right; positions past the edge take the fill.
func TestTranslateFill(t *testing.T) {
	src := randomImage(newRNG(11), 3, 5, 8)
	fill := []float32{26. / 255, 51. / 255, 77. / 255} // levels
	out := affine(src, [6]float64{1, 0, 3, 0, 1, 0}, Bicubic, fill)
	for c := 0; c < 3; c++ {
		for y := 0; y < 5; y++ {
			for x := 0; x < 8; x++ {
				want := fill[c]
				if x+3 < 8 {
					want = at(src, c, y, x+3)
				}
				assertNear(t, "translate", float64(at(out, c, y, x)), float64(want), 0)
			}
		}
	}
}

// Shear X by s maps output centre (x+0.5, y+0.5) to source x-coordinate
// x+0.5 + s*(y+0.5); with s = 1 that is pixel position x+y+0.5, halfway
// between pixels x+y and x+y+1 (bilinear: their mean, truncated to a
// level as PIL does).
func TestShearXBilinear(t *testing.T) {
	src := randomImage(newRNG(12), 1, 4, 12)
	out := affine(src, [6]float64{1, 1, 0, 0, 1, 0}, Bilinear, []float32{0})
	for y := 0; y < 4; y++ {
		for x := 0; x+y+1 < 12; x++ {
			want := (levelOf(at(src, 0, y, x+y)) + levelOf(at(src, 0, y, x+y+1))) / 2
			if got := levelOf(at(out, 0, y, x)); got != want {
				t.Errorf("shear (%d, %d) = level %d, want %d", y, x, got, want)
			}
		}
	}
}

// PIL's cubic at d = 0 is the tap at 0, and a constant stays constant.
func TestCubicConv(t *testing.T) {
	for _, d := range []float64{0, 0.1, 0.5, 0.9} {
		assertNear(t, "constant", cubicConv(7, 7, 7, 7, d), 7, 1e-12)
	}
	if v := cubicConv(3, 100, 250, 9, 0); v != 100 {
		t.Errorf("cubic at 0 = %v, want 100", v)
	}
}

// A crop lying wholly in the padding (tiny image, large padding) is all
// fill; found by FuzzTrainPipeline.
func TestRandomCropTinyImageLargePadding(t *testing.T) {
	rng := newRNG(30)
	for range 200 {
		src := imageFrom(3, 2, 2, func(_, _, _ int) float32 { return 1 })
		out := RandomCrop{H: 2, W: 2, Padding: 4, Fill: 0.5}.Apply(src, rng)
		for _, v := range out.Pix {
			if v != 1 && v != 0.5 {
				t.Fatalf("value %v", v)
			}
		}
	}
}
