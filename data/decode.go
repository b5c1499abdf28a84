package data

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/png" // PNG decoder
	"sync"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/formats/jpeg"
)

// DefaultMaxPixels bounds the width*height of an image the decoders accept.
const DefaultMaxPixels = 1 << 26

// DecodeImage decodes a JPEG or PNG file's bytes into a (3, H, W) RGB image
// with values in [0, 1]. Grey images are replicated to three channels, CMYK
// JPEGs converted to RGB, alpha dropped (PIL's convert("RGB")). Images with
// more than maxPixels pixels (0: DefaultMaxPixels) are rejected before
// decoding. name is used in messages.
func DecodeImage(b []byte, name string, maxPixels int) (augment.Image, error) {
	src, err := decodeSource(b, name, maxPixels, 3)
	if err != nil {
		return augment.Image{}, err
	}
	img := augment.Whole(src)
	src.Release()
	return img, nil
}

// isJPEG reports whether b starts with a JPEG's SOI marker.
func isJPEG(b []byte) bool { return bytes.HasPrefix(b, []byte{0xff, 0xd8}) }

// decodeSource decodes a JPEG or PNG file's bytes for a data set of
// channels 3 (RGB, grey replicated) or 1 (grey images only), as
// DecodeImage does, without converting them: a JPEG of 1 or 3 components
// in a colour data set is held as its DCT coefficients (formats/jpeg), so
// that Region transforms only the blocks it covers. name is used in
// messages.
func decodeSource(b []byte, name string, maxPixels, channels int) (ItemSource, error) {
	if !isJPEG(b) || channels == 1 {
		m, err := decodeFile(b, name, maxPixels)
		if err != nil {
			return nil, err
		}
		return newDecodedSource(m, channels, name)
	}
	m, err := decodeJPEG(b, name, maxPixels)
	if err != nil {
		return nil, err
	}
	if m.Components() == 4 {
		std := m.Std()
		m.Release()
		return newDecodedSource(std, channels, name)
	}
	return jpegSource{m}, nil
}

// decodeJPEG checks a JPEG's size against maxPixels (0: DefaultMaxPixels)
// and decodes it.
func decodeJPEG(b []byte, name string, maxPixels int) (*jpeg.Image, error) {
	if maxPixels <= 0 {
		maxPixels = DefaultMaxPixels
	}
	cfg, err := jpeg.DecodeConfig(b)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", name, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > maxPixels/cfg.Height {
		return nil, fmt.Errorf("data: %s: jpeg image of %dx%d pixels (limit %d pixels)", name, cfg.Width, cfg.Height, maxPixels)
	}
	m, err := jpeg.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("data: %s: jpeg: %w", name, err)
	}
	return m, nil
}

// decodeFile decodes a JPEG or PNG file's bytes as DecodeImage does,
// without converting them, into an image.Image (a JPEG as image/jpeg gives
// it).
func decodeFile(b []byte, name string, maxPixels int) (image.Image, error) {
	if maxPixels <= 0 {
		maxPixels = DefaultMaxPixels
	}
	if isJPEG(b) {
		m, err := decodeJPEG(b, name, maxPixels)
		if err != nil {
			return nil, err
		}
		std := m.Std()
		m.Release()
		return std, nil
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

// jpegSource is a decoded JPEG of 1 or 3 components; Region transforms and
// converts the blocks a region covers.
type jpegSource struct{ m *jpeg.Image }

func (s jpegSource) Size() (c, h, w int) {
	r := s.m.Bounds()
	return 3, r.Dy(), r.Dx()
}

func (s jpegSource) Region(top, left, h, w int) augment.Image {
	bp, _ := regionBytes.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	if cap(*bp) < 3*h*w {
		*bp = make([]byte, 3*h*w)
	}
	pix := (*bp)[:3*h*w]
	s.RegionBytes(pix, top, left, h, w, 1)
	img := augment.NewImage(3, h, w)
	for k, v := range pix {
		img.Pix[k] = augment.ByteValue(v)
	}
	regionBytes.Put(bp)
	return img
}

// MaxReduction is 8: the JPEG's DCT scaling gives 1/2, 1/4 and 1/8.
func (s jpegSource) MaxReduction() int { return 8 }

func (s jpegSource) ReducedSize(f int) (h, w int) {
	w, h = s.m.ScaledSize(f)
	return h, w
}

func (s jpegSource) RegionBytes(dst []byte, top, left, h, w, f int) {
	if err := s.m.RGB(dst, image.Rect(left, top, left+w, top+h), f); err != nil {
		panic(fmt.Sprintf("data: jpeg region: %v", err)) // the caller's contract: the region lies inside
	}
}

// regionBytes holds jpegSource.Region's byte buffers.
var regionBytes sync.Pool

func (s jpegSource) Release() { s.m.Release() }

// toRGB converts a decoded image to a planar RGB float image. A sub-image
// (SubImage) converts its rectangle alone.
func toRGB(src image.Image) augment.Image {
	r := src.Bounds()
	w, h := r.Dx(), r.Dy()
	out := augment.NewImage(3, h, w)
	R, G, B := out.Plane(0), out.Plane(1), out.Plane(2)
	switch m := src.(type) {
	case *image.YCbCr:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				yi, ci := m.YOffset(r.Min.X+x, r.Min.Y+y), m.COffset(r.Min.X+x, r.Min.Y+y)
				cr, cg, cb := color.YCbCrToRGB(m.Y[yi], m.Cb[ci], m.Cr[ci])
				R[y*w+x], G[y*w+x], B[y*w+x] = augment.ByteValue(cr), augment.ByteValue(cg), augment.ByteValue(cb)
			}
		}
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
