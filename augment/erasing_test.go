package augment

import (
	"math"
	"testing"
)

// erasedBox returns the bounding box of the values of img that differ from
// the marker value, and how many differ.
func erasedBox(img Image, marker float32) (y0, y1, x0, x1, n int) {
	y0, x0 = img.H, img.W
	for c := 0; c < img.C; c++ {
		for y := 0; y < img.H; y++ {
			for x := 0; x < img.W; x++ {
				if at(img, c, y, x) != marker {
					n++
					y0, y1, x0, x1 = min(y0, y), max(y1, y+1), min(x0, x), max(x1, x+1)
				}
			}
		}
	}
	return
}

func TestRandomErasingGeometryAndValues(t *testing.T) {
	re := NewRandomErasing(1, ErasePixel)
	rng := newRNG(21)
	const H, W = 64, 48
	marker := float32(100) // outside the range of normal draws
	var areas, vals []float64
	for range 2000 {
		img := imageFrom(3, H, W, func(_, _, _ int) float32 { return marker })
		out := re.Apply(img, rng)
		y0, y1, x0, x1, n := erasedBox(out, marker)
		if n == 0 {
			continue // all ten tries failed (rare)
		}
		h, w := y1-y0, x1-x0
		if n != 3*h*w {
			t.Fatalf("erased %d values, box %dx%d x 3 channels", n, h, w)
		}
		a := float64(h*w) / (H * W)
		r := float64(h) / float64(w)
		if a < 0.015 || a > 1./3+0.03 || r < 0.3*0.8 || r > 1/0.3*1.25 {
			t.Fatalf("box %dx%d: area %.3f aspect %.3f", h, w, a, r)
		}
		areas = append(areas, a)
		for c := 0; c < 3; c++ {
			for y := y0; y < y1; y++ {
				for x := x0; x < x1; x++ {
					vals = append(vals, float64(at(out, c, y, x)))
				}
			}
		}
	}
	if len(areas) < 1900 {
		t.Errorf("only %d of 2000 images erased with probability 1", len(areas))
	}
	m, s := meanStd(vals)
	assertNear(t, "erase value mean", m, 0, 0.01)
	assertNear(t, "erase value std", s, 1, 0.01)
	ma, _ := meanStd(areas)
	if ma < 0.1 || ma > 0.19 {
		t.Errorf("mean erased area %.3f (target uniform 0.02..1/3, large boxes rejected)", ma)
	}
}

func TestRandomErasingProbabilityAndModes(t *testing.T) {
	rng := newRNG(22)
	erased := 0
	re := NewRandomErasing(0.25, EraseConst)
	for range 8000 {
		img := imageFrom(3, 32, 32, func(_, _, _ int) float32 { return 5 })
		out := re.Apply(img, rng)
		if _, _, _, _, n := erasedBox(out, 5); n > 0 {
			erased++
			for _, v := range out.Pix {
				if v != 5 && v != 0 {
					t.Fatalf("const mode wrote %v", v)
				}
			}
		}
	}
	assertNear(t, "erase frequency", float64(erased)/8000, 0.25, 0.02)

	rnd := NewRandomErasing(1, EraseRand)
	img := rnd.Apply(imageFrom(3, 32, 32, func(_, _, _ int) float32 { return 5 }), rng)
	for c := 0; c < 3; c++ {
		seen := map[float32]bool{}
		for _, v := range img.Plane(c) {
			if v != 5 {
				seen[v] = true
			}
		}
		if len(seen) != 1 {
			t.Errorf("rand mode channel %d wrote %d distinct values, want 1", c, len(seen))
		}
	}
}

func TestRandomErasingCount(t *testing.T) {
	re := NewRandomErasing(1, ErasePixel)
	re.Count = 3
	rng := newRNG(23)
	var total float64
	for range 500 {
		img := imageFrom(1, 64, 64, func(_, _, _ int) float32 { return 100 })
		_, _, _, _, n := erasedBox(re.Apply(img, rng), 100)
		total += float64(n) / (64 * 64)
	}
	// count k in {1,2,3} boxes of area U(0.02, 1/3)/k each: the total area
	// is about the same as one box, minus overlaps and rejections
	if m := total / 500; m < 0.08 || m > 0.2 || math.IsNaN(m) {
		t.Errorf("mean erased fraction %.3f with up to 3 boxes", m)
	}
}
