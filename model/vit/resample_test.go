package vit

import (
	"math"
	"testing"
)

func TestResamplePosEmbedKeepsPrefixAndIdentity(t *testing.T) {
	const d, prefix, g = 3, 2, 4
	pos := make([]float32, (prefix+g*g)*d)
	for i := range pos {
		pos[i] = float32(math.Sin(float64(i)))
	}
	for _, m := range []Interpolation{Bicubic, Bilinear} {
		same, err := ResamplePosEmbed(pos, d, prefix, g, g, g, g, m)
		if err != nil {
			t.Fatal(err)
		}
		for i := range pos {
			if math.Abs(float64(same[i]-pos[i])) > 1e-6 {
				t.Fatalf("%s: resampling to the same grid changed element %d: %v → %v", m, i, pos[i], same[i])
			}
		}
		up, err := ResamplePosEmbed(pos, d, prefix, g, g, 7, 5, m)
		if err != nil {
			t.Fatal(err)
		}
		if len(up) != (prefix+35)*d {
			t.Fatalf("%s: got %d values", m, len(up))
		}
		for i := 0; i < prefix*d; i++ {
			if up[i] != pos[i] {
				t.Fatalf("%s: prefix row element %d changed", m, i)
			}
		}
	}
}

func TestResamplePosEmbedConstantAndLinear(t *testing.T) {
	// A constant grid stays constant; a bilinear upsample of a linear ramp
	// away from the borders stays a linear ramp.
	const d = 1
	pos := make([]float32, 4*4)
	for i := range pos {
		pos[i] = 2.5
	}
	for _, m := range []Interpolation{Bicubic, Bilinear} {
		for _, size := range [][2]int{{8, 8}, {2, 2}, {3, 6}} {
			out, err := ResamplePosEmbed(pos, d, 0, 4, 4, size[0], size[1], m)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range out {
				if math.Abs(float64(v)-2.5) > 1e-6 {
					t.Fatalf("%s to %v: element %d = %v, want 2.5", m, size, i, v)
				}
			}
		}
	}
	ramp := make([]float32, 1*8)
	for x := range ramp {
		ramp[x] = float32(x)
	}
	out, err := ResamplePosEmbed(ramp, 1, 0, 1, 8, 1, 16, Bilinear)
	if err != nil {
		t.Fatal(err)
	}
	// Output x samples input coordinate (x+0.5)/2 − 0.5.
	for x := 2; x < 14; x++ {
		want := (float64(x)+0.5)/2 - 0.5
		if math.Abs(float64(out[x])-want) > 1e-6 {
			t.Fatalf("x=%d: %v, want %v", x, out[x], want)
		}
	}
}

func TestResamplePosEmbedErrors(t *testing.T) {
	if _, err := ResamplePosEmbed(make([]float32, 11), 2, 1, 2, 2, 3, 3, Bicubic); err == nil {
		t.Fatal("want a length error")
	}
	if _, err := ResamplePosEmbed(make([]float32, 10), 2, 1, 2, 2, 3, 3, "nearest"); err == nil {
		t.Fatal("want an unknown interpolation error")
	}
}
