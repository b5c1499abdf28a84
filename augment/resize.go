package augment

import "math/rand/v2"

// Resize resizes an image so that its shorter side becomes Size and the
// longer one int(Size*long/short), as torchvision's Resize(int) does, with
// PIL's antialiased filter. Images already of that size are returned as they
// are.
type Resize struct {
	Size   int
	Interp Interp
}

// Apply resizes img (see Resize).
func (r Resize) Apply(img Image, rng *rand.Rand) Image {
	h, w := shortSideSize(img.H, img.W, r.Size)
	return ResizeTo{H: h, W: w, Interp: r.Interp}.Apply(img, rng)
}

// shortSideSize returns the (h, w) that scales the shorter of (ih, iw) to size
// and the longer one proportionally, truncating as torchvision does.
func shortSideSize(ih, iw, size int) (h, w int) {
	if iw <= ih {
		return size * ih / iw, size
	}
	return size, size * iw / ih
}

// ResizeTo resizes an image to exactly (H, W), ignoring its aspect ratio.
type ResizeTo struct {
	H, W   int
	Interp Interp
}

// Apply resizes img to (r.H, r.W); img is returned unchanged when it already
// has that size.
func (r ResizeTo) Apply(img Image, rng *rand.Rand) Image {
	interp := r.Interp.pick(rng)
	if img.H == r.H && img.W == r.W {
		return img
	}
	out := resampleCrop(img, 0, 0, img.H, img.W, r.H, r.W, interp)
	Recycle(img)
	return out
}

// CenterCrop cuts the central (H, W) region, rounding the offsets as
// torchvision does (round half to even of (size-crop)/2). An image smaller
// than the crop is first padded with zeros, torchvision's behaviour.
type CenterCrop struct {
	H, W int
}

// Apply crops img (see CenterCrop).
func (cc CenterCrop) Apply(img Image, _ *rand.Rand) Image {
	if img.H == cc.H && img.W == cc.W {
		return img
	}
	ih, iw := img.H, img.W
	padTop, padLeft := 0, 0
	if cc.W > iw {
		padLeft = (cc.W - iw) / 2
		iw = cc.W
	}
	if cc.H > ih {
		padTop = (cc.H - ih) / 2
		ih = cc.H
	}
	top, left := cc.offsets(ih, iw)
	top, left = top-padTop, left-padLeft
	out := cropFill(img, top, left, cc.H, cc.W, 0)
	Recycle(img)
	return out
}

// offsets returns the top-left corner of the crop of an (ih, iw) image at
// least the crop's size.
func (cc CenterCrop) offsets(ih, iw int) (top, left int) {
	return roundHalfEven(float64(ih-cc.H) / 2), roundHalfEven(float64(iw-cc.W) / 2)
}

// cropFill returns the (h, w) region of img whose top-left corner is (top,
// left); positions outside img take the value fill.
func cropFill(img Image, top, left, h, w int, fill float32) Image {
	out := NewImage(img.C, h, w)
	for c := 0; c < img.C; c++ {
		plane := img.Plane(c)
		for y := 0; y < h; y++ {
			dst := out.Pix[(c*h+y)*w : (c*h+y+1)*w]
			sy := top + y
			if sy < 0 || sy >= img.H {
				fillSlice(dst, fill)
				continue
			}
			// columns [x0, x1) of dst map inside img
			x0 := min(max(-left, 0), w)
			x1 := max(min(img.W-left, w), x0)
			fillSlice(dst[:x0], fill)
			if x1 > x0 {
				copy(dst[x0:x1], plane[sy*img.W+left+x0:sy*img.W+left+x1])
			}
			fillSlice(dst[x1:], fill)
		}
	}
	return out
}

func fillSlice(s []float32, v float32) {
	for i := range s {
		s[i] = v
	}
}
