package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestIm2colShifted checks that the column matrix of a stride-1
// convolution whose output rows are as long as its input's, made a tap
// at a time as one shifted copy (tapRowShifted), is bit for bit the one
// made an output row at a time (tapRow), for kernels from 1×1 to larger
// than the image, padding that keeps the width, and images of one row or
// column; nothing outside a tap's row is written.
func TestIm2colShifted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct{ c, h, w, kh, kw, pad int }{
		{3, 7, 5, 3, 3, 1}, {2, 5, 5, 1, 1, 0}, {2, 6, 6, 5, 5, 2}, {1, 4, 9, 3, 3, 1},
		{2, 1, 4, 3, 3, 1}, {2, 4, 1, 3, 3, 1}, {1, 2, 2, 5, 5, 2}, {1, 8, 3, 1, 3, 1}, {1, 3, 8, 3, 1, 0},
	} {
		g, err := newConvGeom(tc.c, tc.h, tc.w, tc.kh, tc.kw, 1, tc.pad)
		if err != nil {
			t.Fatal(err)
		}
		if g.ow != g.w {
			t.Fatalf("%+v: output width %d, not the input's %d", tc, g.ow, g.w)
		}
		img := make([]float32, g.imageSize())
		for i := range img {
			img[i] = rng.Float32() - 0.5
		}
		n := g.colCols()
		got, want := make([]float32, g.colRows()*n+2), make([]float32, g.colRows()*n+2)
		for i := range got {
			got[i], want[i] = float32(math.NaN()), float32(math.NaN())
		}
		im2col(g, img, got[1:], n)
		for c := 0; c < g.c; c++ {
			plane := img[c*g.h*g.w : (c+1)*g.h*g.w]
			for i := 0; i < g.kh; i++ {
				for j := 0; j < g.kw; j++ {
					tapRow(g, plane, want[1+((c*g.kh+i)*g.kw+j)*n:][:n], i, j)
				}
			}
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: column matrix element %d = %v, want %v", tc, i-1, got[i], want[i])
			}
		}
	}
}
