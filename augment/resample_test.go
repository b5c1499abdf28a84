package augment

import "testing"

func TestResampleIdentity(t *testing.T) {
	src := randomImage(newRNG(1), 3, 7, 9)
	for _, interp := range []Interp{Bilinear, Bicubic} {
		out := resampleCrop(src, 0, 0, 7, 9, 7, 9, interp)
		for i := range src.Pix {
			if out.Pix[i] != src.Pix[i] {
				t.Fatalf("%v: same-size resample changed value %d: %v -> %v", interp, i, src.Pix[i], out.Pix[i])
			}
		}
	}
}

// PIL's 2x bilinear downscale of a row: the first output pixel has centre 1
// and support 2, so taps x=0,1,2 with triangle weights 0.75, 0.75, 0.25
// (normalised by 1.75).
func TestResampleBilinearDownscaleWeights(t *testing.T) {
	row := []float32{0.1, 0.7, 0.3, 0.9, 0.5, 0.2}
	src := Image{C: 1, H: 1, W: 6, Pix: row}
	out := resampleCrop(src, 0, 0, 1, 6, 1, 3, Bilinear)
	want0 := (0.75*0.1 + 0.75*0.7 + 0.25*0.3) / 1.75
	assertNear(t, "out[0]", float64(out.Pix[0]), want0, 1e-6)
	// middle pixel: centre 3, taps 1..4 with weights 0.25 0.75 0.75 0.25
	want1 := (0.25*0.7 + 0.75*0.3 + 0.75*0.9 + 0.25*0.5) / 2
	assertNear(t, "out[1]", float64(out.Pix[1]), want1, 1e-6)
}

// Upscaling reproduces a linear ramp away from the borders (both filters
// interpolate linear functions exactly).
func TestResampleUpscaleLinearRamp(t *testing.T) {
	src := imageFrom(1, 8, 8, func(_, y, x int) float32 { return float32(x+2*y) / 40 })
	for _, interp := range []Interp{Bilinear, Bicubic} {
		out := resampleCrop(src, 0, 0, 8, 8, 16, 16, interp)
		for y := 4; y < 12; y++ {
			for x := 4; x < 12; x++ {
				// output pixel centre (x+0.5)/2 in input pixel units, minus 0.5
				sx, sy := (float64(x)+0.5)/2-0.5, (float64(y)+0.5)/2-0.5
				assertNear(t, interp.String(), float64(at(out, 0, y, x)), (sx+2*sy)/40, 1e-5)
			}
		}
	}
}

// A crop keeps its filter taps inside the cropped region: resizing the crop
// equals resizing a copied-out crop.
func TestResampleCropMatchesCopiedCrop(t *testing.T) {
	src := randomImage(newRNG(2), 3, 30, 40)
	top, left, h, w := 5, 7, 17, 23
	crop := imageFrom(3, h, w, func(c, y, x int) float32 { return at(src, c, top+y, left+x) })
	for _, interp := range []Interp{Bilinear, Bicubic} {
		a := resampleCrop(src, top, left, h, w, 9, 11, interp)
		b := resampleCrop(crop, 0, 0, h, w, 9, 11, interp)
		for i := range a.Pix {
			if a.Pix[i] != b.Pix[i] {
				t.Fatalf("%v: value %d differs: %v vs %v", interp, i, a.Pix[i], b.Pix[i])
			}
		}
	}
}

func TestResampleConstantStaysConstant(t *testing.T) {
	src := imageFrom(2, 13, 17, func(c, _, _ int) float32 { return 0.25 + 0.5*float32(c) })
	for _, interp := range []Interp{Bilinear, Bicubic} {
		out := resampleCrop(src, 0, 0, 13, 17, 5, 29, interp)
		for c := 0; c < 2; c++ {
			for _, v := range out.Plane(c) {
				assertNear(t, "constant", float64(v), 0.25+0.5*float64(c), 1e-6)
			}
		}
	}
}

func TestResizeShorterSide(t *testing.T) {
	for _, tc := range []struct{ h, w, size, wantH, wantW int }{
		{375, 500, 256, 256, 341},
		{500, 375, 256, 341, 256},
		{32, 32, 40, 40, 40},
	} {
		img := randomImage(newRNG(3), 3, tc.h, tc.w)
		out := Resize{Size: tc.size, Interp: Bilinear}.Apply(img, newRNG(1))
		if out.H != tc.wantH || out.W != tc.wantW {
			t.Errorf("Resize(%d) of %dx%d = %dx%d, want %dx%d", tc.size, tc.h, tc.w, out.H, out.W, tc.wantH, tc.wantW)
		}
	}
}

func TestCenterCropOffsets(t *testing.T) {
	src := imageFrom(1, 6, 7, func(_, y, x int) float32 { return float32(10*y+x) / 100 })
	// (6-3)/2 = 1.5 rounds to 2 (half to even); (7-3)/2 = 2.
	out := CenterCrop{H: 3, W: 3}.Apply(src.Clone(), nil)
	for y := 0; y < 3; y++ {
		for x := 0; x < 3; x++ {
			assertNear(t, "crop", float64(at(out, 0, y, x)), float64(10*(y+2)+(x+2))/100, 1e-7)
		}
	}
	// A crop larger than the image pads with zeros: 2x2 into 4x4 at offset 1.
	small := imageFrom(1, 2, 2, func(_, y, x int) float32 { return 1 })
	big := CenterCrop{H: 4, W: 4}.Apply(small, nil)
	sum := float32(0)
	for y := 0; y < 4; y++ {
		for x := 0; x < 4; x++ {
			v := at(big, 0, y, x)
			inside := y >= 1 && y < 3 && x >= 1 && x < 3
			if (v == 1) != inside {
				t.Errorf("padded crop (%d,%d) = %v", y, x, v)
			}
			sum += v
		}
	}
	if sum != 4 {
		t.Errorf("padded crop sum = %v, want 4", sum)
	}
}
