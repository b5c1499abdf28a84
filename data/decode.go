package data

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // JPEG decoder
	_ "image/png"  // PNG decoder

	"github.com/vit-train/vit-train/augment"
)

// DefaultMaxPixels bounds the width*height of an image the decoders accept.
const DefaultMaxPixels = 1 << 26

// DecodeImage decodes a JPEG or PNG file's bytes into a (3, H, W) RGB image
// with values in [0, 1]. Grey images are replicated to three channels, CMYK
// JPEGs converted to RGB, alpha dropped (PIL's convert("RGB")). Images with
// more than maxPixels pixels (0: DefaultMaxPixels) are rejected before
// decoding. name is used in messages.
func DecodeImage(b []byte, name string, maxPixels int) (augment.Image, error) {
	src, err := decodeFile(b, name, maxPixels)
	if err != nil {
		return augment.Image{}, err
	}
	return toRGB(src), nil
}

// decodeFile decodes a JPEG or PNG file's bytes as DecodeImage does,
// without converting them.
func decodeFile(b []byte, name string, maxPixels int) (image.Image, error) {
	if maxPixels <= 0 {
		maxPixels = DefaultMaxPixels
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", name, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > maxPixels/cfg.Height {
		return nil, fmt.Errorf("data: %s: %s image of %dx%d pixels (limit %d pixels)", name, format, cfg.Width, cfg.Height, maxPixels)
	}
	src, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("data: %s: %s: %w", name, format, err)
	}
	return src, nil
}

// toRGB converts a decoded image to a planar RGB float image. A sub-image
// (SubImage) converts its rectangle alone.
func toRGB(src image.Image) augment.Image {
	r := src.Bounds()
	w, h := r.Dx(), r.Dy()
	out := augment.NewImage(3, h, w)
	R, G, B := out.Plane(0), out.Plane(1), out.Plane(2)
	switch m := src.(type) {
	case *image.YCbCr:
		ycbcrToRGB(m, R, G, B)
	case *image.Gray:
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+w]
			for x, v := range row {
				f := augment.ByteValue(v)
				R[y*w+x], G[y*w+x], B[y*w+x] = f, f, f
			}
		}
	case *image.CMYK:
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+4*w]
			for x := 0; x < w; x++ {
				cr, cg, cb := color.CMYKToRGB(row[4*x], row[4*x+1], row[4*x+2], row[4*x+3])
				R[y*w+x], G[y*w+x], B[y*w+x] = augment.ByteValue(cr), augment.ByteValue(cg), augment.ByteValue(cb)
			}
		}
	case *image.NRGBA:
		copyRGBX(m.Pix, m.Stride, w, h, R, G, B)
	case *image.RGBA:
		copyRGBX(m.Pix, m.Stride, w, h, R, G, B)
	case *image.Paletted:
		var lut [256][3]float32
		for i, c := range m.Palette {
			n := color.NRGBAModel.Convert(c).(color.NRGBA)
			lut[i] = [3]float32{augment.ByteValue(n.R), augment.ByteValue(n.G), augment.ByteValue(n.B)}
		}
		for y := 0; y < h; y++ {
			for x, v := range m.Pix[y*m.Stride : y*m.Stride+w] {
				p := lut[v]
				R[y*w+x], G[y*w+x], B[y*w+x] = p[0], p[1], p[2]
			}
		}
	default:
		// 16-bit and other rare formats: per-pixel colour model conversion.
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				n := color.NRGBAModel.Convert(src.At(r.Min.X+x, r.Min.Y+y)).(color.NRGBA)
				R[y*w+x], G[y*w+x], B[y*w+x] = augment.ByteValue(n.R), augment.ByteValue(n.G), augment.ByteValue(n.B)
			}
		}
	}
	return out
}

// copyRGBX splits interleaved 4-byte pixels into planes, dropping the fourth
// byte (alpha).
func copyRGBX(pix []uint8, stride, w, h int, R, G, B []float32) {
	for y := 0; y < h; y++ {
		row := pix[y*stride : y*stride+4*w]
		for x := 0; x < w; x++ {
			R[y*w+x], G[y*w+x], B[y*w+x] = augment.ByteValue(row[4*x]), augment.ByteValue(row[4*x+1]), augment.ByteValue(row[4*x+2])
		}
	}
}

// ycbcrToRGB converts a JPEG YCbCr image with any chroma subsampling to RGB
// planes, with image/color.YCbCrToRGB's fixed-point JFIF arithmetic (same
// results), the chroma terms looked up in tables.
func ycbcrToRGB(m *image.YCbCr, R, G, B []float32) {
	r := m.Rect
	w, h := r.Dx(), r.Dy()
	shift := -1 // log2 of the horizontal chroma subsampling; -1: COffset per pixel
	switch m.SubsampleRatio {
	case image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio440:
		shift = 0
	case image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420:
		shift = 1
	case image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410:
		shift = 2
	}
	if r.Min.X < 0 {
		shift = -1 // shifts would round negative coordinates the wrong way
	}
	for y := 0; y < h; y++ {
		yrow := m.Y[m.YOffset(r.Min.X, r.Min.Y+y):]
		yrow = yrow[:w]
		ro, go_, bo := R[y*w:(y+1)*w], G[y*w:(y+1)*w], B[y*w:(y+1)*w]
		if shift < 0 {
			for x, yv := range yrow {
				ci := m.COffset(r.Min.X+x, r.Min.Y+y)
				ro[x], go_[x], bo[x] = ycbcrPixel(yv, m.Cb[ci], m.Cr[ci])
			}
			continue
		}
		c0 := m.COffset(r.Min.X, r.Min.Y+y) - r.Min.X>>shift
		for x, yv := range yrow {
			ci := c0 + (r.Min.X+x)>>shift
			cb, cr := m.Cb[ci], m.Cr[ci]
			yy := int32(yv) * 0x10101 // ycbcrPixel, inlined by hand
			ro[x] = augment.ByteValue(clampFixed(yy + crToR[cr]))
			go_[x] = augment.ByteValue(clampFixed(yy + cbToG[cb] + crToG[cr]))
			bo[x] = augment.ByteValue(clampFixed(yy + cbToB[cb]))
		}
	}
}

// ycbcrPixel converts one pixel to RGB values in [0, 1].
func ycbcrPixel(yv, cb, cr uint8) (r, g, b float32) {
	yy := int32(yv) * 0x10101
	return augment.ByteValue(clampFixed(yy + crToR[cr])), augment.ByteValue(clampFixed(yy + cbToG[cb] + crToG[cr])), augment.ByteValue(clampFixed(yy + cbToB[cb]))
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
