package augment

import "math"

// affine returns the image whose pixel (x, y) samples src at
// (m[0]*x' + m[1]*y' + m[2], m[3]*x' + m[4]*y' + m[5]) with x' = x+0.5,
// y' = y+0.5 (pixel centres), as PIL's Image.transform(AFFINE) does: bilinear
// or PIL's a = -1 bicubic on clamped neighbours, and fill[c] where the source
// position lies outside src. interp must be Bilinear or Bicubic. src is not
// modified.
func affine(src Image, m [6]float64, interp Interp, fill []float32) Image {
	out := NewImage(src.C, src.H, src.W)
	n := src.H * src.W
	var wx, wy [4]float32
	var ix, iy [4]int
	for y := 0; y < src.H; y++ {
		yc := float64(y) + 0.5
		for x := 0; x < src.W; x++ {
			xc := float64(x) + 0.5
			u := m[0]*xc + m[1]*yc + m[2]
			v := m[3]*xc + m[4]*yc + m[5]
			o := y*src.W + x
			if !(u >= 0 && u < float64(src.W) && v >= 0 && v < float64(src.H)) {
				for c := 0; c < src.C; c++ {
					out.Pix[c*n+o] = fill[c]
				}
				continue
			}
			u -= 0.5
			v -= 0.5
			fx, fy := math.Floor(u), math.Floor(v)
			dx, dy := u-fx, v-fy
			x0, y0 := int(fx), int(fy)
			taps := 2
			if interp == Bicubic {
				taps = 4
				cubicWeights(&wx, dx)
				cubicWeights(&wy, dy)
				x0--
				y0--
			} else {
				wx[0], wx[1] = float32(1-dx), float32(dx)
				wy[0], wy[1] = float32(1-dy), float32(dy)
			}
			for k := 0; k < taps; k++ {
				ix[k] = min(max(x0+k, 0), src.W-1)
				iy[k] = min(max(y0+k, 0), src.H-1) * src.W
			}
			for c := 0; c < src.C; c++ {
				plane := src.Pix[c*n : (c+1)*n]
				var s float32
				for j := 0; j < taps; j++ {
					row := plane[iy[j]:]
					var r float32
					for k := 0; k < taps; k++ {
						r += wx[k] * row[ix[k]]
					}
					s += wy[j] * r
				}
				out.Pix[c*n+o] = clamp01(s)
			}
		}
	}
	return out
}

// cubicWeights fills w with the weights of PIL's geometric bicubic
// (cubic convolution with a = -1) for the 4 taps at offsets -1, 0, 1, 2
// around a point d in [0, 1) past tap 0.
func cubicWeights(w *[4]float32, d float64) {
	// PIL: v = p1 + d*(p2 + d*(p3 + d*p4)), p1 = v2, p2 = v3 - v1,
	// p3 = 2(v1 - v2) + v3 - v4, p4 = -v1 + v2 - v3 + v4.
	d2, d3 := d*d, d*d*d
	w[0] = float32(-d + 2*d2 - d3)
	w[1] = float32(1 - 2*d2 + d3)
	w[2] = float32(d + d2 - d3)
	w[3] = float32(-d2 + d3)
}

// rotateMatrix returns PIL's Image.rotate matrix (counter-clockwise by deg
// degrees about the image centre, no expansion).
func rotateMatrix(h, w int, deg float64) [6]float64 {
	a := -deg * math.Pi / 180
	cx, cy := float64(w)/2, float64(h)/2
	cos, sin := math.Cos(a), math.Sin(a)
	m := [6]float64{cos, sin, 0, -sin, cos, 0}
	m[2] = m[0]*(-cx) + m[1]*(-cy) + cx
	m[5] = m[3]*(-cx) + m[4]*(-cy) + cy
	return m
}
