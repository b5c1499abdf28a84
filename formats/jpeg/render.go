package jpeg

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"math/bits"
	"sync"
)

// RGB writes the rectangle r of the image at 1/scale (scale 1, 2, 4 or 8;
// r in the coordinates of the scaled image, whose size ScaledSize gives)
// into dst as planar RGB bytes: the (3, r.Dy(), r.Dx()) planes R, G and B,
// row by row. Only the blocks that r covers are transformed. A grey image
// gives three equal planes. RGB takes images of 1 or 3 components; Std
// converts 4-component ones.
func (m *Image) RGB(dst []byte, r image.Rectangle, scale int) error {
	if scale != 1 && scale != 2 && scale != 4 && scale != 8 {
		return fmt.Errorf("jpeg: scale %d: want 1, 2, 4 or 8", scale)
	}
	w, h := m.ScaledSize(scale)
	if r.Empty() || !r.In(image.Rect(0, 0, w, h)) {
		return fmt.Errorf("jpeg: rectangle %v outside the %d×%d image at 1/%d", r, w, h, scale)
	}
	if n := 3 * r.Dx() * r.Dy(); len(dst) < n {
		return fmt.Errorf("jpeg: %d bytes for %d RGB samples", len(dst), n)
	}
	if m.nComp != 1 && m.nComp != 3 {
		return UnsupportedError(fmt.Sprintf("RGB output of a %d-component image (use Std)", m.nComp))
	}
	var planes [3]plane
	for i := range m.nComp {
		planes[i] = m.plane(i, r, scale)
	}
	n := r.Dx() * r.Dy()
	R, G, B := dst[:n:n], dst[n:2*n:2*n], dst[2*n:3*n:3*n]
	switch m.colour {
	case modelGrey:
		planes[0].copyTo(R, r)
		copy(G, R)
		copy(B, R)
	case modelRGB:
		planes[0].copyTo(R, r)
		planes[1].copyTo(G, r)
		planes[2].copyTo(B, r)
	default:
		ycbcrToRGB(&planes, r, R, G, B)
	}
	for i := range m.nComp {
		planes[i].release()
	}
	return nil
}

// plane is the samples of one component over a rectangle of whole
// blocks: the sample of output pixel (x, y) is
// pix[(y/vr-y0)*stride + x/hr-x0].
type plane struct {
	pix            []byte
	stride, x0, y0 int
	hr, vr         int // output pixels per sample, across and down
	buf            *[]byte
}

// planePool holds planes' buffers.
var planePool sync.Pool

// plane transforms the blocks of component i that the output rectangle r
// covers at 1/scale.
func (m *Image) plane(i int, r image.Rectangle, scale int) plane {
	c := &m.comp[i]
	hr, vr := m.hMax/c.h, m.vMax/c.v
	if m.nComp == 1 {
		hr, vr = 1, 1
	}
	// A subsampled component is reduced less, as libjpeg does, down to
	// full size: 4:2:0 chroma at 1/2 is transformed at full size.
	g := min(hr, vr, scale)
	scale /= g
	hr, vr = hr/g, vr/g
	bs := 8 / scale
	bx0, bx1 := (r.Min.X/hr)/bs, min(((r.Max.X-1)/hr)/bs+1, c.bw)
	by0, by1 := (r.Min.Y/vr)/bs, min(((r.Max.Y-1)/vr)/bs+1, c.bh)
	p := plane{stride: (bx1 - bx0) * bs, x0: bx0 * bs, y0: by0 * bs, hr: hr, vr: vr}
	n := p.stride * (by1 - by0) * bs
	p.buf, _ = planePool.Get().(*[]byte)
	if p.buf == nil {
		p.buf = new([]byte)
	}
	if cap(*p.buf) < n {
		*p.buf = make([]byte, n)
	}
	p.pix = (*p.buf)[:n]
	if !c.seen {
		clear(p.pix) // image/jpeg leaves a component no scan held at 0
		return p
	}
	for by := by0; by < by1; by++ {
		for bx := bx0; bx < bx1; bx++ {
			dst := p.pix[(by-by0)*bs*p.stride+(bx-bx0)*bs:]
			if scale == 1 {
				idctBlock(c.block(bx, by), &c.quant, dst, p.stride)
			} else {
				scaledIDCT(c.block(bx, by), &c.quant, dst, p.stride, scale)
			}
		}
	}
	return p
}

func (p plane) release() { planePool.Put(p.buf) }

// copyTo copies the plane's samples of the output rectangle r to dst,
// (r.Dy(), r.Dx()), repeating subsampled ones.
func (p plane) copyTo(dst []byte, r image.Rectangle) {
	w := r.Dx()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := p.pix[(y/p.vr-p.y0)*p.stride:]
		out := dst[(y-r.Min.Y)*w : (y-r.Min.Y+1)*w]
		if p.hr == 1 {
			copy(out, row[r.Min.X-p.x0:])
			continue
		}
		for x := range out {
			out[x] = row[(r.Min.X+x)/p.hr-p.x0]
		}
	}
}

// ycbcrToRGB converts the YCbCr planes' samples of the output rectangle r
// to RGB with image/color.YCbCrToRGB's fixed-point JFIF arithmetic (the
// same bytes), the chroma terms looked up in tables; chroma samples are
// repeated over the pixels they cover (nearest neighbour, as image.YCbCr
// gives them).
func ycbcrToRGB(p *[3]plane, r image.Rectangle, R, G, B []byte) {
	w := r.Dx()
	yp, cbp, crp := &p[0], &p[1], &p[2]
	up, _ := upsampled.Get().(*[]byte)
	if up == nil {
		up = new([]byte)
	}
	if cap(*up) < 2*w {
		*up = make([]byte, 2*w)
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		k := (y - r.Min.Y) * w
		ro, gout, bo := R[k:k+w:k+w], G[k:k+w:k+w], B[k:k+w:k+w]
		yrow := yp.pix[(y-yp.y0)*yp.stride+r.Min.X-yp.x0:]
		yrow = yrow[:w:w]
		co := (y/cbp.vr - cbp.y0) * cbp.stride
		cbrow, crrow := cbp.pix[co:co+cbp.stride], crp.pix[co:co+crp.stride]
		switch cbp.hr {
		case 1:
			cbrow, crrow = cbrow[r.Min.X-cbp.x0:], crrow[r.Min.X-cbp.x0:]
			ycbcrRow(yrow, cbrow[:w:w], crrow[:w:w], ro, gout, bo)
		case 2:
			off := r.Min.X - 2*cbp.x0 // pixel x takes chroma sample (off+x)/2
			x0 := 0
			if off&1 != 0 {
				// The first pixel shares its sample with the pixel
				// before the rectangle.
				ro[0], gout[0], bo[0] = ycbcrPixel(yrow[0], cbrow[off>>1], crrow[off>>1])
				x0, off = 1, off+1
			}
			nc := (w - x0 + 1) / 2
			ycbcrHalfRow(yrow[x0:], cbrow[off>>1:][:nc], crrow[off>>1:][:nc], ro[x0:], gout[x0:], bo[x0:])
		default:
			// Chroma samples repeated over the pixels they cover, then
			// converted as 4:4:4.
			// hr is 4: sample (r.Min.X+x)>>sh - x0.
			cbu, cru := (*up)[:w:w], (*up)[w:2*w:2*w]
			sh := uint(bits.TrailingZeros(uint(cbp.hr)))
			off := r.Min.X - cbp.x0<<sh
			cbrow, crrow = cbrow[:(off+w-1)>>sh+1], crrow[:(off+w-1)>>sh+1]
			for x := range cbu {
				ci := (off + x) >> sh
				cbu[x], cru[x] = cbrow[ci], crrow[ci]
			}
			ycbcrRow(yrow, cbu, cru, ro, gout, bo)
		}
	}
	upsampled.Put(up)
}

// upsampled holds ycbcrToRGB's rows of repeated chroma samples.
var upsampled sync.Pool

// ycbcrRow converts a row of YCbCr samples to RGB: ycbcrRowGeneric, or
// its AVX2 version (the same bytes) where the processor has AVX2.
var ycbcrRow = ycbcrRowGeneric

// ycbcrHalfRow converts a row of Y samples whose Cb and Cr samples each
// cover two pixels (len(cb) = (len(y)+1)/2): ycbcrHalfRowGeneric, or its
// AVX2 version (the same bytes) where the processor has AVX2.
var ycbcrHalfRow = ycbcrHalfRowGeneric

// ycbcrHalfRowGeneric converts the pixels of y, each taking chroma sample
// x/2 of cb and cr, to r, g and b.
func ycbcrHalfRowGeneric(y, cb, cr, r, g, b []byte) {
	r, g, b = r[:len(y)], g[:len(y)], b[:len(y)]
	for x, yv := range y {
		r[x], g[x], b[x] = ycbcrPixel(yv, cb[x>>1], cr[x>>1])
	}
}

// ycbcrRowGeneric converts the pixels of y, cb and cr (of one length) to
// r, g and b.
func ycbcrRowGeneric(y, cb, cr, r, g, b []byte) {
	cb, cr, r, g, b = cb[:len(y)], cr[:len(y)], r[:len(y)], g[:len(y)], b[:len(y)]
	for x, yv := range y {
		r[x], g[x], b[x] = ycbcrPixel(yv, cb[x], cr[x])
	}
}

// ycbcrPixel converts one pixel as image/color.YCbCrToRGB does.
func ycbcrPixel(yv, cb, cr uint8) (r, g, b uint8) {
	yy := int32(yv) * 0x10101
	return clampFixed(yy + crToR[cr]), clampFixed(yy + cbToG[cb] + crToG[cr]), clampFixed(yy + cbToB[cb])
}

// Chroma terms of image/color.YCbCrToRGB, by chroma byte.
var crToR, cbToG, crToG, cbToB = func() (a, b, c, d [256]int32) {
	for i := range 256 {
		v := int32(i) - 128
		a[i], b[i], c[i], d[i] = 91881*v, -22554*v, -46802*v, 116130*v
	}
	return
}()

// clampFixed converts a 16.16 fixed-point value to a byte, saturating, as
// image/color.YCbCrToRGB does.
func clampFixed(v int32) uint8 {
	if uint32(v)&0xff000000 == 0 {
		return uint8(v >> 16)
	}
	return uint8(^(v >> 31))
}

// scaledKernels[s] holds, for scale 1<<s, the (8/scale)×8 matrix
// K[i][u] = mean over the scale pixels x of square i of
// C(u)/2·cos((2x+1)uπ/16), C(0) = 1/√2, else 1: the one-dimensional
// inverse DCT averaged over each square.
var scaledKernels = func() (k [4][]float32) {
	for s := 1; s <= 3; s++ {
		scale := 1 << s
		n := 8 / scale
		m := make([]float32, n*8)
		for i := range n {
			for u := range 8 {
				cu := 1.0
				if u == 0 {
					cu = 1 / math.Sqrt2
				}
				sum := 0.0
				for x := i * scale; x < (i+1)*scale; x++ {
					sum += cu / 2 * math.Cos(float64(2*x+1)*float64(u)*math.Pi/16)
				}
				m[i*8+u] = float32(sum / float64(scale))
			}
		}
		k[s] = m
	}
	return
}()

// scaledIDCT writes the (8/scale)² samples of a block reduced by scale (2,
// 4 or 8) to dst: each the mean of the block's scale×scale square of
// pixels, computed from the coefficients directly (the separable inverse
// DCT averaged over the squares), level-shifted, rounded and clipped to
// [0, 255]. At 1/8 only the DC coefficient counts, as in libjpeg's 1×1
// IDCT; rows of zero coefficients are skipped.
func scaledIDCT(coef *[blockSize]int16, q *[blockSize]int32, dst []byte, stride, scale int) {
	n := 8 / scale
	var k []float32
	switch scale {
	case 2:
		k = scaledKernels[1]
	case 4:
		k = scaledKernels[2]
	default:
		v := (float32(int32(coef[0])*q[0]) / 8) + 128.5
		v = min(max(v, 0), 255)
		dst[0] = uint8(v)
		return
	}
	// tmp[v][j] = Σ_u F[v][u]·K[j][u], then out[i][j] = Σ_v K[i][v]·tmp[v][j].
	var tmp [8 * 4]float32
	for v := range 8 {
		row := coef[v*8 : v*8+8 : v*8+8]
		if row[0]|row[1]|row[2]|row[3]|row[4]|row[5]|row[6]|row[7] == 0 {
			continue
		}
		var f [8]float32
		for u, c := range row {
			f[u] = float32(int32(c) * q[v*8+u])
		}
		for j := range n {
			kj := k[j*8 : j*8+8 : j*8+8]
			tmp[v*4+j] = f[0]*kj[0] + f[1]*kj[1] + f[2]*kj[2] + f[3]*kj[3] + f[4]*kj[4] + f[5]*kj[5] + f[6]*kj[6] + f[7]*kj[7]
		}
	}
	for i := range n {
		ki := k[i*8 : i*8+8 : i*8+8]
		row := dst[i*stride : i*stride+n]
		for j := range row {
			s := float32(128.5)
			for v, kv := range ki {
				s += kv * tmp[v*4+j]
			}
			row[j] = uint8(min(max(s, 0), 255))
		}
	}
}

// Std returns the whole image as image/jpeg's Decode does, with the same
// pixels: an *image.Gray, *image.YCbCr, *image.RGBA (RGB files) or
// *image.CMYK (4-component files).
func (m *Image) Std() image.Image {
	mxx, myy := m.comp[0].bw/m.comp[0].h, m.comp[0].bh/m.comp[0].v
	bounds := image.Rect(0, 0, m.width, m.height)
	if m.nComp == 1 {
		g := image.NewGray(image.Rect(0, 0, 8*mxx, 8*myy))
		m.renderComp(0, g.Pix, g.Stride)
		return g.SubImage(bounds)
	}
	var ratio image.YCbCrSubsampleRatio
	switch (m.hMax/m.comp[1].h)<<4 | m.vMax/m.comp[1].v {
	case 0x11:
		ratio = image.YCbCrSubsampleRatio444
	case 0x12:
		ratio = image.YCbCrSubsampleRatio440
	case 0x21:
		ratio = image.YCbCrSubsampleRatio422
	case 0x22:
		ratio = image.YCbCrSubsampleRatio420
	case 0x41:
		ratio = image.YCbCrSubsampleRatio411
	default:
		ratio = image.YCbCrSubsampleRatio410
	}
	full := image.NewYCbCr(image.Rect(0, 0, 8*m.hMax*mxx, 8*m.vMax*myy), ratio)
	m.renderComp(0, full.Y, full.YStride)
	m.renderComp(1, full.Cb, full.CStride)
	m.renderComp(2, full.Cr, full.CStride)
	img3 := full.SubImage(bounds).(*image.YCbCr)
	switch m.colour {
	case modelRGB:
		return convertToRGB(img3, m.hMax/m.comp[1].h)
	case modelCMYK, modelYCCK:
		c3 := &m.comp[3]
		black := make([]byte, 8*c3.bw*8*c3.bh)
		m.renderComp(3, black, 8*c3.bw)
		return m.applyBlack(img3, black, 8*c3.bw)
	}
	return img3
}

// renderComp transforms all the blocks of component i at full size into
// dst with the given stride.
func (m *Image) renderComp(i int, dst []byte, stride int) {
	c := &m.comp[i]
	if !c.seen {
		return
	}
	for by := range c.bh {
		for bx := range c.bw {
			idctBlock(c.block(bx, by), &c.quant, dst[8*(by*stride+bx):], stride)
		}
	}
}

// convertToRGB interleaves an RGB file's planes, as image/jpeg does.
func convertToRGB(img3 *image.YCbCr, cScale int) image.Image {
	bounds := img3.Bounds()
	img := image.NewRGBA(bounds)
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		po := img.PixOffset(bounds.Min.X, y)
		yo := img3.YOffset(bounds.Min.X, y)
		co := img3.COffset(bounds.Min.X, y)
		for i, iMax := 0, bounds.Max.X-bounds.Min.X; i < iMax; i++ {
			img.Pix[po+4*i+0] = img3.Y[yo+i]
			img.Pix[po+4*i+1] = img3.Cb[co+i/cScale]
			img.Pix[po+4*i+2] = img3.Cr[co+i/cScale]
			img.Pix[po+4*i+3] = 255
		}
	}
	return img
}

// applyBlack combines img3 and the black plane into a CMYK image, as
// image/jpeg does: Adobe CMYK JPEG images are inverted (255 means no ink);
// YCbCrK ones are converted to RGB, inverted to CMY, and given the black
// plane inverted.
func (m *Image) applyBlack(img3 *image.YCbCr, blackPix []byte, blackStride int) image.Image {
	bounds := img3.Bounds()
	if m.colour == modelYCCK {
		img := image.NewCMYK(bounds)
		for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
			for x := bounds.Min.X; x < bounds.Max.X; x++ {
				yi, ci := img3.YOffset(x, y), img3.COffset(x, y)
				r, g, b := color.YCbCrToRGB(img3.Y[yi], img3.Cb[ci], img3.Cr[ci])
				i := img.PixOffset(x, y)
				img.Pix[i], img.Pix[i+1], img.Pix[i+2] = r, g, b
				img.Pix[i+3] = 255 - blackPix[(y-bounds.Min.Y)*blackStride+(x-bounds.Min.X)]
			}
		}
		return img
	}
	img := image.NewCMYK(bounds)
	translations := [4]struct {
		src    []byte
		stride int
	}{
		{img3.Y, img3.YStride},
		{img3.Cb, img3.CStride},
		{img3.Cr, img3.CStride},
		{blackPix, blackStride},
	}
	for t, translation := range translations {
		subsample := m.comp[t].h != m.comp[0].h || m.comp[t].v != m.comp[0].v
		for iBase, y := 0, bounds.Min.Y; y < bounds.Max.Y; iBase, y = iBase+img.Stride, y+1 {
			sy := y - bounds.Min.Y
			if subsample {
				sy /= 2
			}
			for i, x := iBase+t, bounds.Min.X; x < bounds.Max.X; i, x = i+4, x+1 {
				sx := x - bounds.Min.X
				if subsample {
					sx /= 2
				}
				img.Pix[i] = 255 - translation.src[sy*translation.stride+sx]
			}
		}
	}
	return img
}
