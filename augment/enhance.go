package augment

// Colour operations of ColorJitter on [0, 1] images, as torchvision's
// tensor functions: blends with ImageEnhance's degenerate images (color,
// contrast, brightness) stay in float and are clamped to [0, 1].
// RandAugment's operations work on levels (levelops.go).

// levelOf returns the 8-bit level of v: v*255 + 0.5 in float32, clamped to
// [0, 255] (NaN to 0) and truncated, which is round(v*255) for v in [0, 1].
func levelOf(v float32) int {
	x := v*255 + 0.5
	if !(x > 0) {
		return 0
	}
	if x >= 255 {
		return 255
	}
	return int(x)
}

// levelValue[l] is l/255.
var levelValue = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(i) / 255
	}
	return
}()

// ByteValue returns b/255, the [0, 1] value of an 8-bit level, as decoders
// and dataset readers store pixels.
func ByteValue(b uint8) float32 { return levelValue[b] }

// Luma weights of PIL's RGB to L conversion (ITU-R 601-2).
const (
	lumaR = 0.299
	lumaG = 0.587
	lumaB = 0.114
)

// blendToward replaces v by deg + factor*(v - deg), clamped to [0, 1]
// (PIL's Image.blend(degenerate, img, factor)).
func blendToward(v, deg, factor float32) float32 {
	return clamp01(deg + factor*(v-deg))
}

// colorEnhance blends each pixel with its grey value (ImageEnhance.Color,
// torchvision's saturation); single-channel images are unchanged. In place.
func colorEnhance(img Image, factor float64) Image {
	if img.C != 3 {
		return img
	}
	f := float32(factor)
	r, g, b := img.Plane(0), img.Plane(1), img.Plane(2)
	for i := range r {
		grey := lumaR*r[i] + lumaG*g[i] + lumaB*b[i]
		r[i] = blendToward(r[i], grey, f)
		g[i] = blendToward(g[i], grey, f)
		b[i] = blendToward(b[i], grey, f)
	}
	return img
}

// meanGreyLevel returns the mean of the image's grey levels rounded to an
// 8-bit level, as a value in [0, 1] (ImageEnhance.Contrast's degenerate).
func meanGreyLevel(img Image) float32 {
	var sum float64
	if img.C == 3 {
		r, g, b := img.Plane(0), img.Plane(1), img.Plane(2)
		for i := range r {
			sum += float64(lumaR*r[i] + lumaG*g[i] + lumaB*b[i])
		}
	} else {
		for _, v := range img.Plane(0) {
			sum += float64(v)
		}
	}
	mean := sum / float64(img.H*img.W) * 255
	return levelValue[min(max(int(mean+0.5), 0), 255)]
}

// contrastEnhance blends the image with its mean grey level
// (ImageEnhance.Contrast). In place.
func contrastEnhance(img Image, factor float64) Image {
	mean, f := meanGreyLevel(img), float32(factor)
	for i, v := range img.Pix {
		img.Pix[i] = blendToward(v, mean, f)
	}
	return img
}

// brightnessEnhance scales every value by factor (ImageEnhance.Brightness).
// In place.
func brightnessEnhance(img Image, factor float64) Image {
	f := float32(factor)
	for i, v := range img.Pix {
		img.Pix[i] = clamp01(v * f)
	}
	return img
}

// hueShift rotates the hue of an RGB image by shift turns (torchvision's
// adjust_hue, shift in [-0.5, 0.5]); single-channel images are unchanged.
// In place.
func hueShift(img Image, shift float64) Image {
	if img.C != 3 || shift == 0 {
		return img
	}
	r, g, b := img.Plane(0), img.Plane(1), img.Plane(2)
	for i := range r {
		h, s, v := rgbToHSV(float64(r[i]), float64(g[i]), float64(b[i]))
		h += shift
		h -= float64(int(h))
		if h < 0 {
			h++
		}
		rr, gg, bb := hsvToRGB(h, s, v)
		r[i], g[i], b[i] = clamp01(float32(rr)), clamp01(float32(gg)), clamp01(float32(bb))
	}
	return img
}

// rgbToHSV converts RGB in [0, 1] to hue in [0, 1), saturation and value.
func rgbToHSV(r, g, b float64) (h, s, v float64) {
	mx := max(r, g, b)
	mn := min(r, g, b)
	v = mx
	d := mx - mn
	if mx == 0 || d == 0 {
		return 0, 0, v
	}
	s = d / mx
	switch mx {
	case r:
		h = (g - b) / d
	case g:
		h = 2 + (b-r)/d
	default:
		h = 4 + (r-g)/d
	}
	h /= 6
	if h < 0 {
		h++
	}
	return h, s, v
}

// hsvToRGB converts hue in [0, 1), saturation and value to RGB.
func hsvToRGB(h, s, v float64) (r, g, b float64) {
	if s == 0 {
		return v, v, v
	}
	h6 := h * 6
	i := int(h6)
	f := h6 - float64(i)
	p, q, t := v*(1-s), v*(1-s*f), v*(1-s*(1-f))
	switch i % 6 {
	case 0:
		return v, t, p
	case 1:
		return q, v, p
	case 2:
		return p, v, t
	case 3:
		return p, q, v
	case 4:
		return t, p, v
	default:
		return v, p, q
	}
}
