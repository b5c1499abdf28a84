package viz_test

import (
	"image"
	"image/color"
	"testing"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/viz"
)

func TestUpsampleMap(t *testing.T) {
	// Columns 0 and 1 of a 2×2 map, rescaled to [0, 1], then 2→4 bilinear
	// with half-pixel centres: output x at input (x+0.5)/2−0.5 =
	// −0.25, 0.25, 0.75, 1.25, edges clamped: [a, .75a+.25b, .25a+.75b, b].
	m := []float64{3, 5, 3, 5}
	got, err := viz.UpsampleMap(m, 2, 2, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 0.25, 0.75, 1}
	for y := 0; y < 4; y++ {
		for x := 0; x < 4; x++ {
			if !near(float64(got[y*4+x]), want[x], 1e-6) {
				t.Fatalf("row %d = %v, want %v", y, got[y*4:y*4+4], want)
			}
		}
	}
	flat, err := viz.UpsampleMap([]float64{2, 2, 2, 2}, 2, 2, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range flat {
		if v != 0 {
			t.Fatalf("a constant map upsampled to %v, want zeros", flat)
		}
	}
	if _, err := viz.UpsampleMap(m, 2, 3, 4, 4); err == nil {
		t.Error("UpsampleMap accepted 4 values as (2, 3)")
	}
}

func TestToRGBA(t *testing.T) {
	grey := augment.Image{C: 1, H: 1, W: 2, Pix: []float32{0.2, 1.5}}
	g, err := viz.ToRGBA(grey)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.RGBAAt(0, 0); got != (color.RGBA{51, 51, 51, 255}) {
		t.Errorf("grey 0.2 → %v", got)
	}
	if got := g.RGBAAt(1, 0); got != (color.RGBA{255, 255, 255, 255}) {
		t.Errorf("grey 1.5 → %v, want clamped white", got)
	}
	rgb := augment.Image{C: 3, H: 1, W: 1, Pix: []float32{1, 0, 0.5}}
	c, err := viz.ToRGBA(rgb)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.RGBAAt(0, 0); got != (color.RGBA{255, 0, 128, 255}) {
		t.Errorf("RGB (1, 0, 0.5) → %v", got)
	}
	if _, err := viz.ToRGBA(augment.Image{C: 2, H: 1, W: 1, Pix: []float32{0, 0}}); err == nil {
		t.Error("ToRGBA accepted 2 channels")
	}
}

func TestOverlay(t *testing.T) {
	base := image.NewRGBA(image.Rect(0, 0, 2, 1))
	base.SetRGBA(0, 0, color.RGBA{255, 255, 255, 255})
	base.SetRGBA(1, 0, color.RGBA{0, 0, 0, 255})
	out, err := viz.Overlay(base, []float32{0, 1}, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	// heat 0 is (0, 0, 128) over white; heat 1 is (128, 0, 0) over black.
	if got := out.RGBAAt(0, 0); got != (color.RGBA{128, 128, 192, 255}) {
		t.Errorf("pixel 0 = %v, want (128, 128, 192)", got)
	}
	if got := out.RGBAAt(1, 0); got != (color.RGBA{64, 0, 0, 255}) {
		t.Errorf("pixel 1 = %v, want (64, 0, 0)", got)
	}
	if _, err := viz.Overlay(base, []float32{0}, 0.5); err == nil {
		t.Error("Overlay accepted a heat map of the wrong size")
	}
}
