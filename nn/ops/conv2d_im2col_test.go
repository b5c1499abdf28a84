package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// shiftedGeoms are stride-1 convolutions whose output rows are as long
// as their input's: kernels from 1×1 to larger than the image, images of
// one row or one column, and larger planes.
var shiftedGeoms = []struct{ c, h, w, kh, kw, pad int }{
	{3, 7, 5, 3, 3, 1}, {2, 5, 5, 1, 1, 0}, {2, 6, 6, 5, 5, 2}, {1, 4, 9, 3, 3, 1},
	{2, 1, 4, 3, 3, 1}, {2, 4, 1, 3, 3, 1}, {1, 2, 2, 5, 5, 2}, {1, 8, 3, 1, 3, 1}, {1, 3, 8, 3, 1, 0},
	{2, 40, 30, 3, 3, 1}, {1, 70, 33, 5, 5, 2},
}

// shiftedGeom is tc's geometry, checked to keep the width.
func shiftedGeom(t *testing.T, tc struct{ c, h, w, kh, kw, pad int }) convGeom {
	t.Helper()
	g, err := newConvGeom(tc.c, tc.h, tc.w, tc.kh, tc.kw, 1, tc.pad)
	if err != nil {
		t.Fatal(err)
	}
	if g.ow != g.w {
		t.Fatalf("%+v: output width %d, not the input's %d", tc, g.ow, g.w)
	}
	return g
}

// TestIm2colShifted checks that the column matrix of each of
// shiftedGeoms, made a tap at a time as one shifted copy (tapRowShifted),
// is bit for bit the one made an output row at a time (tapRow); nothing
// outside a tap's row is written.
func TestIm2colShifted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range shiftedGeoms {
		g := shiftedGeom(t, tc)
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

// TestCol2imShifted checks that col2im of each of shiftedGeoms, adding a
// tap at a time as one shifted block (addTapShifted), gives every pixel
// bit for bit the sum that adding an output row at a time gives (addTap),
// with entries of both signs, zeros of both signs and a NaN among them,
// and writes nothing outside the image.
func TestCol2imShifted(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, tc := range shiftedGeoms {
		g := shiftedGeom(t, tc)
		n := g.colCols()
		col := make([]float32, g.colRows()*n)
		for i := range col {
			switch rng.IntN(8) {
			case 0:
				col[i] = float32(math.Copysign(0, -1))
			case 1:
				col[i] = 0
			default:
				col[i] = rng.Float32() - 0.5
			}
		}
		col[rng.IntN(len(col))] = float32(math.NaN())
		got, want := make([]float32, g.imageSize()+2), make([]float32, g.imageSize()+2)
		for i := range got {
			got[i], want[i] = 7, 7
		}
		col2im(g, append([]float32(nil), col...), n, got[1:])
		for c := 0; c < g.c; c++ {
			plane := want[1+c*g.h*g.w:][:g.h*g.w]
			clear(plane)
			for i := 0; i < g.kh; i++ {
				for j := 0; j < g.kw; j++ {
					addTap(g, col[((c*g.kh+i)*g.kw+j)*n:][:n], plane, i, j)
				}
			}
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: image element %d = %v (%#x), want %v (%#x)", tc, i-1, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
}
