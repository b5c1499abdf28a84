package augment

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"
)

// pilCase is one reference output of testdata/pil/gen.py.
type pilCase struct {
	Name string
	Args struct {
		Interp            string
		Deg, Factor       float64
		M                 []float64
		Bits, Thresh      int
		Top, Left, Ch, Cw int
	}
	H, W int
	Pix  []int
}

type pilFile struct {
	Pillow string
	H, W   int
	Input  []int
	Cases  []pilCase
}

// hwcImage converts interleaved uint8 RGB rows to a planar [0, 1] image.
func hwcImage(pix []int, h, w int) Image {
	img := Image{C: 3, H: h, W: w, Pix: make([]float32, 3*h*w)}
	for i := 0; i < h*w; i++ {
		for c := 0; c < 3; c++ {
			img.Pix[c*h*w+i] = float32(pix[3*i+c]) / 255
		}
	}
	return img
}

// runPILCase applies the Go counterpart of a reference case.
func runPILCase(t *testing.T, pc pilCase, in Image) Image {
	interp := Bilinear
	if pc.Args.Interp == "bicubic" {
		interp = Bicubic
	}
	fill := []float32{124. / 255, 116. / 255, 104. / 255}
	switch pc.Name {
	case "resize":
		return resampleCrop(in, 0, 0, in.H, in.W, pc.H, pc.W, interp)
	case "resized_crop":
		return resampleCrop(in, pc.Args.Top, pc.Args.Left, pc.Args.Ch, pc.Args.Cw, pc.H, pc.W, interp)
	case "rotate":
		return affine(in, rotateMatrix(in.H, in.W, pc.Args.Deg), interp, fill)
	case "affine":
		var m [6]float64
		copy(m[:], pc.Args.M)
		return affine(in, m, interp, fill)
	case "autocontrast":
		return autoContrast(in)
	case "equalize":
		return equalize(in)
	case "invert":
		return invert(in)
	case "posterize":
		return posterize(in, pc.Args.Bits)
	case "solarize":
		return solarize(in, pc.Args.Thresh)
	case "color":
		return onLevels(in, func(b levelImage) levelImage { return colorLevels(b, pc.Args.Factor) })
	case "contrast":
		return onLevels(in, func(b levelImage) levelImage { return contrastLevels(b, pc.Args.Factor) })
	case "brightness":
		return onLevels(in, func(b levelImage) levelImage { return brightnessLevels(b, pc.Args.Factor) })
	case "sharpness":
		return sharpness(in, pc.Args.Factor)
	}
	t.Fatalf("unknown case %q", pc.Name)
	return Image{}
}

// TestMatchesPIL compares every PIL-compatible operation with Pillow's
// output (testdata/pil/pil.json, made by gen.py). Pillow rounds to 8 bits
// after every pass; the float resampling may differ by a level or two, the
// level operations not at all.
func TestMatchesPIL(t *testing.T) {
	raw, err := os.ReadFile("testdata/pil/pil.json")
	if err != nil {
		t.Fatal(err)
	}
	var f pilFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	for _, pc := range f.Cases {
		name := fmt.Sprintf("%s%+v", pc.Name, pc.Args)
		in := hwcImage(f.Input, f.H, f.W)
		out := runPILCase(t, pc, in)
		want := hwcImage(pc.Pix, pc.H, pc.W)
		if out.H != want.H || out.W != want.W {
			t.Errorf("%s: size %dx%d, want %dx%d", name, out.H, out.W, want.H, want.W)
			continue
		}
		var worst, sum float64
		for i := range want.Pix {
			d := math.Abs(float64(out.Pix[i]-want.Pix[i])) * 255
			worst = max(worst, d)
			sum += d
		}
		mean := sum / float64(len(want.Pix))
		tol := pilTolerance[pc.Name]
		if worst > tol || mean > 0.6 {
			t.Errorf("%s: max difference %.2f levels (allowed %.0f), mean %.3f", name, worst, tol, mean)
		} else if testing.Verbose() {
			t.Logf("%s: max %.2f mean %.3f levels", name, worst, mean)
		}
	}
}

// pilTolerance is the largest difference allowed per operation, in 8-bit
// levels: Pillow rounds its 8-bit intermediates between the two passes of
// resize, which runs in float32 here; RandAugment's operations run on
// levels as Pillow's do and must match exactly.
var pilTolerance = map[string]float64{
	"resize": 1.5, "resized_crop": 1.5, "rotate": 0.01, "affine": 0.01,
	"autocontrast": 0.01, "equalize": 0.01, "invert": 0.01, "posterize": 0.01, "solarize": 0.01,
	"color": 0.01, "contrast": 0.01, "brightness": 0.01, "sharpness": 0.01,
}
