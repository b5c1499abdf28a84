package augment

import (
	"math"
	"testing"
)

// levelsImage is a (1, 1, len(levels)) image of the given 8-bit levels.
func levelsImage(levels ...int) Image {
	img := Image{C: 1, H: 1, W: len(levels), Pix: make([]float32, len(levels))}
	for i, l := range levels {
		img.Pix[i] = float32(l) / 255
	}
	return img
}

func assertLevels(t *testing.T, what string, img Image, want ...int) {
	t.Helper()
	for i, l := range want {
		if got := levelOf(img.Pix[i]); got != l || !near(float64(img.Pix[i]), float64(l)/255, 1e-6) {
			t.Errorf("%s: value %d = %v (level %d), want level %d", what, i, img.Pix[i], got, l)
		}
	}
}

func TestPosterizeSolarize(t *testing.T) {
	assertLevels(t, "posterize 1", posterize(levelsImage(0, 127, 128, 255), 1), 0, 0, 128, 128)
	assertLevels(t, "posterize 4", posterize(levelsImage(0x1f, 0xab), 4), 0x10, 0xa0)
	assertLevels(t, "posterize 0", posterize(levelsImage(200), 0), 0)
	assertLevels(t, "posterize 8", posterize(levelsImage(201), 8), 201)
	assertLevels(t, "solarize 128", solarize(levelsImage(100, 127, 128, 200), 128), 100, 127, 127, 55)
	assertLevels(t, "solarize 256", solarize(levelsImage(0, 255), 256), 0, 255)
	assertLevels(t, "solarize add 50", solarizeAdd(levelsImage(100, 120, 127, 128, 250), 50), 150, 170, 177, 128, 250)
	assertLevels(t, "solarize add 200", solarizeAdd(levelsImage(100), 200), 255)
}

func TestAutoContrast(t *testing.T) {
	// levels 50..150 stretch to 0..255: ix*2.55 - 127.5, truncated
	img := autoContrast(levelsImage(50, 100, 150))
	assertLevels(t, "autocontrast", img, 0, 127, 255)
	assertLevels(t, "autocontrast flat", autoContrast(levelsImage(80, 80)), 80, 80)
}

// 300 pixels each at levels 10, 20, 30: step = (900-300)/255 = 2, so the
// table maps 10 -> 1/2 = 0, 20 -> 301/2 = 150, 30 -> 601/2 = 300 -> 255.
func TestEqualize(t *testing.T) {
	var levels []int
	for _, l := range []int{10, 20, 30} {
		for range 300 {
			levels = append(levels, l)
		}
	}
	img := equalize(levelsImage(levels...))
	assertLevels(t, "equalize", Image{C: 1, H: 1, W: 3, Pix: []float32{img.Pix[0], img.Pix[300], img.Pix[600]}}, 0, 150, 255)
	assertLevels(t, "equalize single level", equalize(levelsImage(7, 7, 7)), 7, 7, 7)
}

func TestBlendsAtKnownFactors(t *testing.T) {
	rgb := Image{C: 3, H: 1, W: 2, Pix: []float32{0.8, 0.2, 0.4, 0.6, 0.1, 0.9}}
	grey := []float64{0.299*0.8 + 0.587*0.4 + 0.114*0.1, 0.299*0.2 + 0.587*0.6 + 0.114*0.9}

	c0 := colorEnhance(rgb.Clone(), 0)
	for c := 0; c < 3; c++ {
		for x := 0; x < 2; x++ {
			assertNear(t, "colour 0 -> grey", float64(at(c0, c, 0, x)), grey[x], 1e-6)
		}
	}
	c2 := colorEnhance(rgb.Clone(), 2)
	assertNear(t, "colour 2", float64(at(c2, 0, 0, 0)), min(1, grey[0]+2*(0.8-grey[0])), 1e-6)
	c1 := colorEnhance(rgb.Clone(), 1)
	for i := range rgb.Pix {
		assertNear(t, "colour 1", float64(c1.Pix[i]), float64(rgb.Pix[i]), 1e-6)
	}

	// contrast 0: every value becomes the mean grey level, rounded to 1/255.
	meanLevel := float64(int((grey[0]+grey[1])/2*255+0.5)) / 255
	k0 := contrastEnhance(rgb.Clone(), 0)
	for _, v := range k0.Pix {
		assertNear(t, "contrast 0", float64(v), meanLevel, 1e-6)
	}
	k15 := contrastEnhance(rgb.Clone(), 1.5)
	assertNear(t, "contrast 1.5", float64(k15.Pix[1]), meanLevel+1.5*(0.2-meanLevel), 1e-6)

	b := brightnessEnhance(rgb.Clone(), 0.5)
	for i := range rgb.Pix {
		assertNear(t, "brightness 0.5", float64(b.Pix[i]), float64(rgb.Pix[i])/2, 1e-7)
	}
	b2 := brightnessEnhance(rgb.Clone(), 1.9)
	assertNear(t, "brightness clamps", float64(b2.Pix[0]), 1, 0)

	inv := invert(rgb.Clone())
	assertNear(t, "invert", float64(inv.Pix[0]), 0.2, 1e-6)
}

// Sharpness 1 keeps the image; sharpness 0 is PIL's SMOOTH filter, the
// 3×3 sum [1 1 1; 1 5 1; 1 1 1] over 13 rounded to a level, the border
// unchanged.
func TestSharpness(t *testing.T) {
	src := randomImage(newRNG(13), 1, 5, 6)
	same := sharpness(src, 1)
	for i := range src.Pix {
		assertNear(t, "sharpness 1", float64(same.Pix[i]), float64(src.Pix[i]), 0)
	}
	smooth := sharpness(src, 0)
	level := func(img Image, y, x int) int { return levelOf(at(img, 0, y, x)) }
	for y := range 5 {
		for x := range 6 {
			want := level(src, y, x)
			if y > 0 && y < 4 && x > 0 && x < 5 {
				s := 4 * level(src, y, x)
				for dy := -1; dy <= 1; dy++ {
					for dx := -1; dx <= 1; dx++ {
						s += level(src, y+dy, x+dx)
					}
				}
				want = int(math.Round(float64(s) / 13))
			}
			if got := level(smooth, y, x); got != want {
				t.Errorf("smooth (%d, %d) = level %d, want %d", y, x, got, want)
			}
		}
	}
}

func TestHueShift(t *testing.T) {
	img := Image{C: 3, H: 1, W: 3, Pix: []float32{1, 0, 0, 0, 1, 0, 0, 0, 1}} // red, green, blue
	out := hueShift(img, 1./3)
	want := []float32{0, 0, 1, 1, 0, 0, 0, 1, 0} // green, blue, red
	for i := range want {
		assertNear(t, "hue", float64(out.Pix[i]), float64(want[i]), 1e-6)
	}
	// round trip of random colours
	rng := newRNG(14)
	for range 1000 {
		r, g, b := rng.Float64(), rng.Float64(), rng.Float64()
		h, s, v := rgbToHSV(r, g, b)
		r2, g2, b2 := hsvToRGB(h, s, v)
		if !near(r, r2, 1e-9) || !near(g, g2, 1e-9) || !near(b, b2, 1e-9) {
			t.Fatalf("HSV round trip of (%v,%v,%v) gave (%v,%v,%v)", r, g, b, r2, g2, b2)
		}
	}
}

func TestColorJitterRange(t *testing.T) {
	rng := newRNG(15)
	var vals []float64
	for range 4000 {
		img := imageFrom(1, 2, 2, func(_, _, _ int) float32 { return 0.5 })
		out := ColorJitter{Brightness: 0.4}.Apply(img, rng)
		v := float64(out.Pix[0])
		if v < 0.3-1e-6 || v > 0.7+1e-6 {
			t.Fatalf("brightness-jittered 0.5 = %v outside [0.3, 0.7]", v)
		}
		vals = append(vals, v)
	}
	m, s := meanStd(vals)
	assertNear(t, "jitter mean", m, 0.5, 0.01)
	assertNear(t, "jitter std", s, 0.4/(2*1.7320508), 0.01) // 0.5*U(0.6,1.4): std 0.5*0.8/sqrt(12)
}

func TestGrey(t *testing.T) {
	img := NewImage(3, 1, 2)
	copy(img.Pix, []float32{0.8, 0.2, 0.4, 0.6, 0.1, 0.9})
	g := Grey(img)
	want := []float64{0.299*0.8 + 0.587*0.4 + 0.114*0.1, 0.299*0.2 + 0.587*0.6 + 0.114*0.9}
	if g.C != 1 || g.H != 1 || g.W != 2 {
		t.Fatalf("shape (%d, %d, %d)", g.C, g.H, g.W)
	}
	for i, w := range want {
		if d := float64(g.Pix[i]) - w; d > 1e-6 || d < -1e-6 {
			t.Fatalf("pixel %d: %v, want %v", i, g.Pix[i], w)
		}
	}
}
