package jpeg

import (
	"image"
	"sync"
)

// Image is a decoded JPEG: each component's quantised DCT coefficients,
// block by block, in natural (not zig-zag) order. Its pixels are computed
// as RGB or Std asks for them. Release hands its memory back for the next
// Decode.
type Image struct {
	width, height int
	nComp         int
	hMax, vMax    int // the first component's sampling factors
	colour        colourModel
	progressive   bool
	comp          [maxComponents]compCoeffs
	coef          []int16 // all components' blocks
}

// colourModel is how an image's components map to RGB.
type colourModel uint8

const (
	modelGrey  colourModel = iota // one component
	modelYCbCr                    // JFIF YCbCr
	modelRGB                      // three components stored as R, G, B
	modelCMYK                     // Adobe CMYK, inverted
	modelYCCK                     // Adobe YCbCrK
)

// compCoeffs is one component's blocks.
type compCoeffs struct {
	h, v   int     // sampling factors
	bw, bh int     // blocks per row and per column (whole MCUs)
	blocks []int16 // bw·bh blocks of 64 coefficients, row by row
	quant  [blockSize]int32
	seen   bool // whether a scan held the component
	scans  int  // how many scans held it
}

// block returns block (bx, by).
func (c *compCoeffs) block(bx, by int) *[blockSize]int16 {
	return (*[blockSize]int16)(c.blocks[(by*c.bw+bx)*blockSize:])
}

// setQuant sets the component's quantisation table, given in zig-zag
// order, in natural order.
func (c *compCoeffs) setQuant(q *[blockSize]int32) {
	for zig, v := range q {
		c.quant[unzig[zig]] = v
	}
}

// coefPool holds the coefficient buffers of released images.
var coefPool sync.Pool

// newImage allocates the coefficients of d's frame, mxx × myy MCUs.
func newImage(d *decoder, mxx, myy int) *Image {
	m := &Image{width: d.width, height: d.height, nComp: d.nComp, hMax: d.comp[0].h, vMax: d.comp[0].v}
	n := 0
	for i := range d.nComp {
		c := &m.comp[i]
		c.h, c.v = d.comp[i].h, d.comp[i].v
		c.bw, c.bh = mxx*c.h, myy*c.v
		n += c.bw * c.bh * blockSize
	}
	if p, _ := coefPool.Get().(*[]int16); p != nil && cap(*p) >= n {
		m.coef = (*p)[:n]
		clear(m.coef)
	} else {
		m.coef = make([]int16, n)
	}
	off := 0
	for i := range d.nComp {
		c := &m.comp[i]
		size := c.bw * c.bh * blockSize
		c.blocks = m.coef[off : off+size : off+size]
		off += size
	}
	return m
}

// finish records what the whole file says about the image: the colour
// model, and for a progressive file the quantisation tables at its end.
func (m *Image) finish(d *decoder) {
	switch {
	case d.nComp == 1:
		m.colour = modelGrey
	case d.nComp == 4 && d.adobeTransform != adobeTransformUnknown:
		m.colour = modelYCCK
	case d.nComp == 4:
		m.colour = modelCMYK
	case d.isRGB():
		m.colour = modelRGB
	default:
		m.colour = modelYCbCr
	}
	m.progressive = d.progressive
	if d.progressive {
		for i := range d.nComp {
			m.comp[i].setQuant(&d.quant[d.comp[i].tq])
		}
	}
}

// Release hands the image's memory back for later images; m must not be
// used afterwards.
func (m *Image) Release() {
	if m.coef == nil {
		return
	}
	p := m.coef[:0]
	coefPool.Put(&p)
	m.coef = nil
	for i := range m.comp {
		m.comp[i].blocks = nil
	}
}

// Bounds returns the image's size, (0, 0)–(width, height).
func (m *Image) Bounds() image.Rectangle { return image.Rect(0, 0, m.width, m.height) }

// Components returns the number of components: 1 (grey), 3 (YCbCr or
// RGB) or 4 (CMYK or YCbCrK).
func (m *Image) Components() int { return m.nComp }

// ScaledSize returns the image's size at 1/scale, each side rounded up, as
// libjpeg's DCT scaling gives it.
func (m *Image) ScaledSize(scale int) (w, h int) {
	return (m.width + scale - 1) / scale, (m.height + scale - 1) / scale
}
