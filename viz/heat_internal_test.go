package viz

import (
	"image"
	"image/color"
	"testing"
)

func TestHeatColors(t *testing.T) {
	l := heatColors()
	cases := []struct {
		v    float64
		want color.RGBA
	}{
		{0, color.RGBA{0, 0, 128, 255}},       // dark blue
		{-3, color.RGBA{0, 0, 128, 255}},      // clamped
		{1, color.RGBA{128, 0, 0, 255}},       // dark red
		{7, color.RGBA{128, 0, 0, 255}},       // clamped
		{0.5, color.RGBA{130, 255, 125, 255}}, // index 128 = 0.502: between cyan and yellow
	}
	for _, c := range cases {
		got := l.at(c.v)
		if d := diff(got, c.want); d > 1 {
			t.Errorf("heat colour of %g = %v, want %v", c.v, got, c.want)
		}
	}
}

func diff(a, b color.RGBA) int {
	abs := func(x int) int { return max(x, -x) }
	return max(abs(int(a.R)-int(b.R)), abs(int(a.G)-int(b.G)), abs(int(a.B)-int(b.B)), abs(int(a.A)-int(b.A)))
}

func TestSimilarityColors(t *testing.T) {
	l := newLUT(similarityColors(), -1, 1)
	lo, mid, hi := l.at(-1), l.at(0), l.at(1)
	if !(lo.B > lo.R && hi.R > hi.B) {
		t.Errorf("−1 is %v and 1 is %v; want blue and red", lo, hi)
	}
	if mid.R < 200 || mid.G < 200 || mid.B < 200 {
		t.Errorf("0 is %v, want near white", mid)
	}
}

func TestScaleNearest(t *testing.T) {
	src := image.NewRGBA(image.Rect(0, 0, 2, 1))
	src.SetRGBA(0, 0, color.RGBA{1, 2, 3, 255})
	src.SetRGBA(1, 0, color.RGBA{4, 5, 6, 255})
	out := scaleNearest(src, 3)
	if b := out.Bounds(); b.Dx() != 6 || b.Dy() != 3 {
		t.Fatalf("scaled to %v", b)
	}
	for y := 0; y < 3; y++ {
		for x := 0; x < 6; x++ {
			want := src.RGBAAt(x/3, 0)
			if got := out.RGBAAt(x, y); got != want {
				t.Fatalf("pixel (%d, %d) = %v, want %v", x, y, got, want)
			}
		}
	}
}
