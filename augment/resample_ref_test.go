package augment

import (
	"slices"
	"testing"
)

// refHorizontalPass and refVerticalPass are the resampling passes written
// plainly, one output value at a time, for the optimised passes to match
// bit for bit.
func refHorizontalPass(src Image, top, left, ch, cw, outW int, interp Interp) Image {
	out := Image{C: src.C, H: ch, W: outW, Pix: make([]float32, src.C*ch*outW)}
	co := computeCoeffs(cw, outW, interp)
	for c := 0; c < src.C; c++ {
		for y := 0; y < ch; y++ {
			row := src.Pix[(c*src.H+top+y)*src.W+left : (c*src.H+top+y)*src.W+left+cw]
			for x := 0; x < outW; x++ {
				var s float32
				for k := 0; k < co.size[x]; k++ {
					s += co.w[x*co.ksize+k] * row[co.start[x]+k]
				}
				out.Pix[(c*ch+y)*outW+x] = clamp01(s)
			}
		}
	}
	return out
}

func refVerticalPass(src Image, outH int, interp Interp) Image {
	co := computeCoeffs(src.H, outH, interp)
	out := Image{C: src.C, H: outH, W: src.W, Pix: make([]float32, src.C*outH*src.W)}
	for c := 0; c < src.C; c++ {
		for y := 0; y < outH; y++ {
			for x := 0; x < src.W; x++ {
				var s float32
				for k := 0; k < co.size[y]; k++ {
					s += co.w[y*co.ksize+k] * src.Pix[(c*src.H+co.start[y]+k)*src.W+x]
				}
				out.Pix[(c*outH+y)*src.W+x] = clamp01(s)
			}
		}
	}
	return out
}

// The passes give the plain passes' values bit for bit, for crops of any
// row count (multiples of the passes' row blocks and not), up- and
// downscaling, both filters.
func TestResamplePassesMatchPlain(t *testing.T) {
	rng := newRNG(5)
	img := randomImage(rng, 3, 53, 61)
	for _, interp := range []Interp{Bilinear, Bicubic} {
		for _, c := range []struct{ top, left, ch, cw, outH, outW int }{
			{0, 0, 53, 61, 17, 23}, {3, 5, 41, 37, 64, 80}, {1, 2, 7, 9, 5, 4}, {0, 0, 1, 61, 3, 7}, {10, 20, 30, 40, 30, 11}, {2, 3, 5, 50, 2, 50},
		} {
			h := horizontalPass(img, c.top, c.left, c.ch, c.cw, c.outW, interp)
			if want := refHorizontalPass(img, c.top, c.left, c.ch, c.cw, c.outW, interp); c.cw != c.outW && !slices.Equal(h.Pix, want.Pix) {
				t.Fatalf("%v %+v: horizontal pass differs", interp, c)
			}
			v := verticalPass(h.Clone(), c.outH, interp)
			if want := refVerticalPass(h, c.outH, interp); c.ch != c.outH && !slices.Equal(v.Pix, want.Pix) {
				t.Fatalf("%v %+v: vertical pass differs", interp, c)
			}
		}
	}
}
