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
func affineLevels(src ByteImage, m [6]float64, interp Interp, fill []uint8) ByteImage {
	out := newByteImage(src.C, src.H, src.W)
	n := src.H * src.W
	for y := range src.H {
		yc := float64(y) + 0.5
		for x := range src.W {
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
			u -= 0.5
			v -= 0.5
			fx, fy := math.Floor(u), math.Floor(v)
			t := affineTaps{dx: u - fx, dy: v - fy, x: int(fx), y: int(fy), w: src.W, h: src.H}
			for c := range src.C {
				plane := src.Pix[c*n : (c+1)*n]
				var s float64
				if interp == Bicubic {
					s = t.bicubic(plane)
				} else {
					s = t.bilinear(plane)
				}
				out.Pix[c*n+o] = truncLevel(s)
			}
		}
	}
	return out
}

// affineTaps is the sampling position of one output pixel: the tap at or
// before it (x, y), its offsets dx, dy in [0, 1), and the plane's size.
type affineTaps struct {
	dx, dy float64
	x, y   int
	w, h   int
}

// at returns the level at column x, row y of plane, clamped to the image.
func (t *affineTaps) at(plane []uint8, x, y int) float64 {
	return float64(plane[min(max(y, 0), t.h-1)*t.w+min(max(x, 0), t.w-1)])
}

// bilinear interpolates the 2×2 taps (PIL's BILINEAR_BODY).
func (t *affineTaps) bilinear(plane []uint8) float64 {
	row := func(y int) float64 {
		a, b := t.at(plane, t.x, y), t.at(plane, t.x+1, y)
		return a + (b-a)*t.dx
	}
	v1, v2 := row(t.y), row(t.y+1)
	return v1 + (v2-v1)*t.dy
}

// bicubic interpolates the 4×4 taps (PIL's BICUBIC_BODY), rows first.
// Where dy is 0 the result is the row at y alone, and where dx is 0 each
// row's value is its tap at x: those taps alone are read (the same value).
func (t *affineTaps) bicubic(plane []uint8) float64 {
	row := func(y int) float64 {
		if t.dx == 0 {
			return t.at(plane, t.x, y)
		}
		return cubicConv(t.at(plane, t.x-1, y), t.at(plane, t.x, y), t.at(plane, t.x+1, y), t.at(plane, t.x+2, y), t.dx)
	}
	if t.dy == 0 {
		return row(t.y)
	}
	return cubicConv(row(t.y-1), row(t.y), row(t.y+1), row(t.y+2), t.dy)
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
