package viz

import (
	"fmt"
	"image"
	"image/color"

	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"

	"github.com/vit-train/vit-train/augment"
)

// lut is a colour map sampled at 256 evenly spaced values of [Min, Max].
type lut struct {
	colors   [256]color.RGBA
	min, max float64
}

func newLUT(cm palette.ColorMap, min, max float64) *lut {
	cm.SetMin(min)
	cm.SetMax(max)
	l := &lut{min: min, max: max}
	for i := range l.colors {
		c, err := cm.At(min + (max-min)*float64(i)/255)
		if err != nil { // only for values outside [min, max], which i keeps within
			c = color.Black
		}
		r, g, b, _ := c.RGBA()
		l.colors[i] = color.RGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0xff}
	}
	return l
}

// at returns the colour of v, clamped to the map's range.
func (l *lut) at(v float64) color.RGBA {
	t := (v - l.min) / (l.max - l.min)
	switch {
	case !(t > 0): // also NaN
		t = 0
	case t > 1:
		t = 1
	}
	return l.colors[int(t*255+0.5)]
}

// jetControls are matplotlib's "jet" colour map, the usual one for
// attention overlays: dark blue, blue, cyan, yellow, red, dark red.
var jetControls = []struct {
	at      float64
	r, g, b float64
}{{0, 0, 0, 0.5}, {0.125, 0, 0, 1}, {0.375, 0, 1, 1}, {0.625, 1, 1, 0}, {0.875, 1, 0, 0}, {1, 0.5, 0, 0}}

// heatColors is the colour map of attention (0 to 1), jetControls
// interpolated linearly.
func heatColors() *lut {
	l := &lut{min: 0, max: 1}
	for i := range l.colors {
		v := float64(i) / 255
		k := 1
		for k < len(jetControls)-1 && v > jetControls[k].at {
			k++
		}
		a, b := jetControls[k-1], jetControls[k]
		t := (v - a.at) / (b.at - a.at)
		mix := func(x, y float64) uint8 { return uint8(255*((1-t)*x+t*y) + 0.5) }
		l.colors[i] = color.RGBA{R: mix(a.r, b.r), G: mix(a.g, b.g), B: mix(a.b, b.b), A: 0xff}
	}
	return l
}

// similarityColors is the colour map of cosine similarity (−1 to 1): blue,
// white, red.
func similarityColors() palette.ColorMap {
	cm := moreland.SmoothBlueRed()
	cm.SetMin(-1)
	cm.SetMax(1)
	return cm
}

// UpsampleMap rescales a (gh, gw) map to [0, 1], its minimum to 0 and its
// maximum to 1, and resizes it to (h, w) with the bilinear filter of the
// augment package (half-pixel centres, as cv2.resize and PIL do). A constant
// map comes back all zero.
func UpsampleMap(m []float64, gh, gw, h, w int) ([]float32, error) {
	if gh < 1 || gw < 1 || len(m) != gh*gw || h < 1 || w < 1 {
		return nil, fmt.Errorf("viz: upsampling a %d-value map as (%d, %d) to (%d, %d)", len(m), gh, gw, h, w)
	}
	src := augment.NewImage(1, gh, gw)
	lo, hi := m[0], m[0]
	for _, v := range m {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi > lo {
		for i, v := range m {
			src.Pix[i] = float32((v - lo) / (hi - lo))
		}
	} else {
		clear(src.Pix)
	}
	up := augment.ResizeTo{H: h, W: w, Interp: augment.Bilinear}.Apply(src, nil)
	out := append([]float32(nil), up.Pix...)
	augment.Recycle(up)
	return out, nil
}

// ToRGBA renders a (1 or 3, H, W) image with values in [0, 1] as 8-bit RGBA.
func ToRGBA(img augment.Image) (*image.RGBA, error) {
	if err := img.Valid(); err != nil {
		return nil, err
	}
	if img.C != 1 && img.C != 3 {
		return nil, fmt.Errorf("viz: cannot show an image of %d channels", img.C)
	}
	out := image.NewRGBA(image.Rect(0, 0, img.W, img.H))
	r, g, b := img.Plane(0), img.Plane(0), img.Plane(0)
	if img.C == 3 {
		g, b = img.Plane(1), img.Plane(2)
	}
	for i := range r {
		out.Pix[4*i], out.Pix[4*i+1], out.Pix[4*i+2], out.Pix[4*i+3] = toByte(r[i]), toByte(g[i]), toByte(b[i]), 0xff
	}
	return out, nil
}

func toByte(v float32) uint8 {
	switch {
	case !(v > 0):
		return 0
	case v >= 1:
		return 0xff
	}
	return uint8(v*255 + 0.5)
}

// Overlay blends a heat map (H·W values in [0, 1], from UpsampleMap) over
// base (H, W): each pixel becomes (1−alpha)·base + alpha·colour(heat).
func Overlay(base *image.RGBA, heat []float32, alpha float64) (*image.RGBA, error) {
	b := base.Bounds()
	if len(heat) != b.Dx()*b.Dy() {
		return nil, fmt.Errorf("viz: heat map of %d values over a %dx%d image", len(heat), b.Dx(), b.Dy())
	}
	colors := heatColors()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	a := float32(alpha)
	mix := func(p, c uint8) uint8 { return uint8((1-a)*float32(p) + a*float32(c) + 0.5) }
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			p := base.RGBAAt(b.Min.X+x, b.Min.Y+y)
			c := colors.at(float64(heat[y*b.Dx()+x]))
			out.SetRGBA(x, y, color.RGBA{R: mix(p.R, c.R), G: mix(p.G, c.G), B: mix(p.B, c.B), A: 0xff})
		}
	}
	return out, nil
}

// scaleNearest enlarges img by an integer factor, repeating pixels, so that
// small inputs (28 × 28) stay sharp when drawn large.
func scaleNearest(img *image.RGBA, factor int) *image.RGBA {
	if factor <= 1 {
		return img
	}
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx()*factor, b.Dy()*factor))
	for y := 0; y < b.Dy()*factor; y++ {
		for x := 0; x < b.Dx()*factor; x++ {
			out.SetRGBA(x, y, img.RGBAAt(b.Min.X+x/factor, b.Min.Y+y/factor))
		}
	}
	return out
}
