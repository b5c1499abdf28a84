package augment

import (
	"math"
	"strconv"
)

// affineLevels returns the image whose pixel (x, y) samples src at
// (m[0]*x' + m[1]*y' + m[2], m[3]*x' + m[4]*y' + m[5]) with x' = x+0.5,
// y' = y+0.5 (pixel centres), as PIL 9.4's Image.transform(AFFINE) does on
// an 8-bit image, to the level: bilinear, or bicubic (cubic convolution
// with a = -1) on clamped neighbours, in float64, truncated to a level;
// fill[c] where the source position lies outside src. interp must be
// Bilinear or Bicubic. The result is a new (C, H, W) image from the pool;
// src is not modified.
func affineLevels(src levelImage, m [6]float64, interp Interp, fill []uint8) levelImage {
	out := newLevelImage(src.C, src.H, src.W)
	x0 := 0 // the pixels of each row that affineBicubicRow computes
	var padded []float32
	var fills []float64
	if interp == Bicubic && affineBicubicRow != nil && src.W >= affineBicubicGroup {
		x0 = src.W &^ (affineBicubicGroup - 1)
		padded = paddedLevels(src)
		defer floatPool.put(padded)
		fills = make([]float64, src.C)
		for c := range fills {
			fills[c] = float64(fill[c])
		}
	}
	wp, hp := src.W+4, src.H+4
	for y := range src.H {
		if x0 > 0 {
			yc := float64(y) + 0.5
			k := [8]float64{m[0], m[1] * yc, m[2], m[3], m[4] * yc, m[5], float64(src.W), float64(src.H)}
			affineBicubicRow(&out.Pix[y*src.W], src.H*src.W, &padded[0], hp*wp, wp, &k, x0, src.C, &fills[0])
		}
		affinePixels(out, src, m, interp, fill, y, x0)
	}
	return out
}

// affineBicubicRow is nil, or an assembly kernel that computes
// affinePixels's bicubic values of row y's first n pixels (a positive
// multiple of affineBicubicGroup, a power of two): dst is the row's first
// output of channel 0, dstPlane
// the values of a channel; k holds m[0], m[1]·(y+0.5), m[2], m[3],
// m[4]·(y+0.5), m[5], the width and the height; src is paddedLevels's
// (C, H+4, W+4) planes, srcPlane and wp their plane and row sizes; fill
// holds the fill of each of the channels.
var affineBicubicRow func(dst *uint8, dstPlane int, src *float32, srcPlane, wp int, k *[8]float64, n, channels int, fill *float64)

// affineBicubicGroup is the pixels affineBicubicRow computes at a time.
var affineBicubicGroup = 4

// affinePixels computes pixels x0… of output row y of affineLevels, one
// at a time.
func affinePixels(out, src levelImage, m [6]float64, interp Interp, fill []uint8, y, x0 int) {
	n := src.H * src.W
	yc := float64(y) + 0.5
	var t affineTaps
	for x := x0; x < src.W; x++ {
		xc := float64(x) + 0.5
		u := m[0]*xc + m[1]*yc + m[2]
		v := m[3]*xc + m[4]*yc + m[5]
		o := y*src.W + x
		if !(u >= 0 && u < float64(src.W) && v >= 0 && v < float64(src.H)) {
			for c := range src.C {
				out.Pix[c*n+o] = fill[c]
			}
			continue
		}
		t.place(u-0.5, v-0.5, src.W, src.H)
		if interp == Bicubic {
			t.bicubic(out.Pix, src.Pix, o, n)
		} else {
			t.bilinear(out.Pix, src.Pix, o, n)
		}
	}
}

// paddedLevels returns src's levels as float32 in a (C, H+4, W+4) buffer
// from the pool, each plane padded by two pixels on every side that
// repeat the nearest edge pixel: the clamped taps of affineLevels.
func paddedLevels(src levelImage) []float32 {
	wp, hp := src.W+4, src.H+4
	padded := floatPool.get(src.C * hp * wp)
	for c := range src.C {
		plane := src.Plane(c)
		for r := range hp {
			row := plane[min(max(r-2, 0), src.H-1)*src.W:][:src.W]
			dst := padded[(c*hp+r)*wp:][:wp]
			first, last := levelF32[row[0]], levelF32[row[src.W-1]]
			dst[0], dst[1], dst[wp-2], dst[wp-1] = first, first, last, last
			floatLevels(dst[2:][:src.W], row)
		}
	}
	return padded
}

// floatLevels sets dst[i] to float32(src[i]): floatLevelsGeneric, or its
// AVX2 version (the same values) where the processor has AVX2.
var floatLevels = floatLevelsGeneric

// floatLevelsGeneric sets dst[i] to levelF32[src[i]].
func floatLevelsGeneric(dst []float32, src []uint8) {
	dst = dst[:len(src)]
	for i, l := range src {
		dst[i] = levelF32[l]
	}
}

// affineTaps is where one output pixel samples a (h, w) plane: the
// offsets dx, dy in [0, 1) past the tap at or before the position, the
// columns of the taps at -1, 0, 1 and 2 from it and the offsets of their
// rows in the plane, clamped to the image.
type affineTaps struct {
	dx, dy float64
	col    [4]int
	row    [4]int
}

// place sets t for the position (u, v) of a (h, w) plane (PIL's taps, the
// pixel centres at integers).
func (t *affineTaps) place(u, v float64, w, h int) {
	fx, fy := math.Floor(u), math.Floor(v)
	t.dx, t.dy = u-fx, v-fy
	x, y := int(fx)-1, int(fy)-1
	for k := range 4 {
		t.col[k] = min(max(x+k, 0), w-1)
		t.row[k] = min(max(y+k, 0), h-1) * w
	}
}

// bilinear sets dst[c·n+o] for every channel c of the planes of n
// values in src to the interpolation of the 2×2 taps at 0 and 1 (PIL's
// BILINEAR_BODY; a row past the bottom repeats the last, as clamping
// does), truncated to a level.
func (t *affineTaps) bilinear(dst, src []uint8, o, n int) {
	a0, a1 := t.row[1]+t.col[1], t.row[1]+t.col[2]
	b0, b1 := t.row[2]+t.col[1], t.row[2]+t.col[2]
	for p := 0; p+n <= len(src); p += n {
		plane := src[p : p+n]
		a, b := levelF64[plane[a0]], levelF64[plane[a1]]
		v1 := a + (b-a)*t.dx
		a, b = levelF64[plane[b0]], levelF64[plane[b1]]
		v2 := a + (b-a)*t.dx
		dst[p+o] = truncLevel(v1 + (v2-v1)*t.dy)
	}
}

// bicubic sets dst[c·n+o] for every channel c of the planes of n values
// in src to the interpolation of the 4×4 taps (PIL's BICUBIC_BODY, rows
// first), truncated to a level. Where dy is 0 the result is the row at 0
// alone, and where dx is 0 each row's value is its tap at 0: those taps
// alone are read (the same value).
func (t *affineTaps) bicubic(dst, src []uint8, o, n int) {
	switch {
	case t.dx == 0 && t.dy == 0:
		for p := 0; p+n <= len(src); p += n {
			dst[p+o] = src[p+t.row[1]+t.col[1]]
		}
	case t.dy == 0:
		r := t.row[1]
		i0, i1, i2, i3 := r+t.col[0], r+t.col[1], r+t.col[2], r+t.col[3]
		for p := 0; p+n <= len(src); p += n {
			plane := src[p : p+n]
			dst[p+o] = truncLevel(cubicConv(levelF64[plane[i0]], levelF64[plane[i1]], levelF64[plane[i2]], levelF64[plane[i3]], t.dx))
		}
	case t.dx == 0:
		c := t.col[1]
		i0, i1, i2, i3 := t.row[0]+c, t.row[1]+c, t.row[2]+c, t.row[3]+c
		for p := 0; p+n <= len(src); p += n {
			plane := src[p : p+n]
			dst[p+o] = truncLevel(cubicConv(levelF64[plane[i0]], levelF64[plane[i1]], levelF64[plane[i2]], levelF64[plane[i3]], t.dy))
		}
	default:
		for p := 0; p+n <= len(src); p += n {
			plane := src[p : p+n]
			v1 := cubicTaps(plane[t.row[0]:], &t.col, t.dx)
			v2 := cubicTaps(plane[t.row[1]:], &t.col, t.dx)
			v3 := cubicTaps(plane[t.row[2]:], &t.col, t.dx)
			v4 := cubicTaps(plane[t.row[3]:], &t.col, t.dx)
			dst[p+o] = truncLevel(cubicConv(v1, v2, v3, v4, t.dy))
		}
	}
}

// cubicTaps is cubicConv of the levels at the four offsets of s at d.
func cubicTaps(s []uint8, at *[4]int, d float64) float64 {
	return cubicConv(levelF64[s[at[0]]], levelF64[s[at[1]]], levelF64[s[at[2]]], levelF64[s[at[3]]], d)
}

// cubicConv is PIL's BICUBIC macro: the cubic through v1…v4 (taps at -1,
// 0, 1, 2) at d in [0, 1), with a = -1.
func cubicConv(v1, v2, v3, v4, d float64) float64 {
	p1 := v2
	p2 := -v1 + v3
	p3 := 2*(v1-v2) + v3 - v4
	p4 := -v1 + v2 - v3 + v4
	return p1 + d*(p2+d*(p3+d*p4))
}

// levelF64[l] is float64(l): a table read, which unlike the conversion
// instruction carries no dependence on the register it writes.
var levelF64 = func() (t [256]float64) {
	for i := range t {
		t[i] = float64(i)
	}
	return
}()

// levelF32[l] is float32(l).
var levelF32 = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(i)
	}
	return
}()

// truncLevel clips v to [0, 255] and truncates it to a level.
func truncLevel(v float64) uint8 {
	if v <= 0 {
		return 0
	}
	if v >= 255 {
		return 255
	}
	return uint8(v)
}

// rotateMatrix returns PIL 9.4's Image.rotate matrix (counter-clockwise by
// deg degrees about the image centre, no expansion): the angle taken
// modulo 360, its cosine and sine rounded to 15 decimals.
func rotateMatrix(h, w int, deg float64) [6]float64 {
	d := math.Mod(deg, 360)
	if d < 0 {
		d += 360
	}
	a := -(d * (math.Pi / 180))
	cos, sin := round15(math.Cos(a)), round15(math.Sin(a))
	m := [6]float64{cos, sin, 0, round15(-math.Sin(a)), cos, 0}
	cx, cy := float64(w)/2, float64(h)/2
	m[2] = m[0]*(-cx) + m[1]*(-cy) + cx
	m[5] = m[3]*(-cx) + m[4]*(-cy) + cy
	return m
}

// round15 rounds v to 15 decimals, correctly (Python's round(v, 15)).
func round15(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 15, 64), 64)
	return r
}
