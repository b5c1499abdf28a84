package augment

// Colour operations with PIL's ImageOps/ImageEnhance semantics on [0, 1]
// images. Operations PIL defines on 8-bit levels (autocontrast, equalize,
// posterize, solarize) quantise to levels round(v*255) and produce values on
// the 1/255 grid; blends (color, contrast, brightness, sharpness) stay in
// float and are clamped to [0, 1].

// levelOf returns the 8-bit level of v: round(v*255) clamped to [0, 255].
func levelOf(v float32) int {
	l := int(v*255 + 0.5)
	return min(max(l, 0), 255)
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

// applyLUT maps every value of plane through a 256-entry level table.
func applyLUT(plane []float32, lut *[256]float32) {
	for i, v := range plane {
		plane[i] = lut[levelOf(v)]
	}
}

func histogram(plane []float32) (h [256]int) {
	for _, v := range plane {
		h[levelOf(v)]++
	}
	return h
}

// autoContrast stretches each channel so that its darkest level maps to 0
// and its brightest to 1 (ImageOps.autocontrast, cutoff 0). In place.
func autoContrast(img Image) Image {
	for c := 0; c < img.C; c++ {
		p := img.Plane(c)
		h := histogram(p)
		lo, hi := 0, 255
		for lo < 256 && h[lo] == 0 {
			lo++
		}
		for hi >= 0 && h[hi] == 0 {
			hi--
		}
		var lut [256]float32
		if hi <= lo {
			lut = levelValue
		} else {
			scale := 255 / float64(hi-lo)
			offset := -float64(lo) * scale
			for i := range lut {
				l := int(float64(i)*scale + offset)
				lut[i] = levelValue[min(max(l, 0), 255)]
			}
		}
		applyLUT(p, &lut)
	}
	return img
}

// equalize equalises the histogram of each channel (ImageOps.equalize).
// In place.
func equalize(img Image) Image {
	for c := 0; c < img.C; c++ {
		p := img.Plane(c)
		h := histogram(p)
		last, total, nonzero := 0, 0, 0
		for _, n := range h {
			if n > 0 {
				last = n
				total += n
				nonzero++
			}
		}
		lut := levelValue
		if nonzero > 1 {
			if step := (total - last) / 255; step > 0 {
				n := step / 2
				for i := range lut {
					lut[i] = levelValue[min(n/step, 255)]
					n += h[i]
				}
			}
		}
		applyLUT(p, &lut)
	}
	return img
}

// invert maps v to 1-v. In place.
func invert(img Image) Image {
	for i, v := range img.Pix {
		img.Pix[i] = 1 - v
	}
	return img
}

// posterize keeps the top bits of every 8-bit level (ImageOps.posterize);
// bits >= 8 leaves the image unchanged. In place.
func posterize(img Image, bits int) Image {
	if bits >= 8 {
		return img
	}
	bits = max(bits, 0)
	mask := ^((1 << (8 - bits)) - 1) & 0xff
	var lut [256]float32
	for i := range lut {
		lut[i] = levelValue[i&mask]
	}
	applyLUT(img.Pix, &lut)
	return img
}

// solarize inverts the levels at or above thresh (ImageOps.solarize).
// In place.
func solarize(img Image, thresh int) Image {
	var lut [256]float32
	for i := range lut {
		if i < thresh {
			lut[i] = levelValue[i]
		} else {
			lut[i] = levelValue[255-i]
		}
	}
	applyLUT(img.Pix, &lut)
	return img
}

// solarizeAdd adds add to the levels below 128, saturating at 255 (timm's
// solarize_add). In place.
func solarizeAdd(img Image, add int) Image {
	const thresh = 128
	var lut [256]float32
	for i := range lut {
		if i < thresh {
			lut[i] = levelValue[min(i+add, 255)]
		} else {
			lut[i] = levelValue[i]
		}
	}
	applyLUT(img.Pix, &lut)
	return img
}

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

// sharpnessEnhance blends the image with PIL's SMOOTH-filtered copy (3x3
// kernel [1 1 1; 1 5 1; 1 1 1]/13, border pixels unchanged)
// (ImageEnhance.Sharpness). It returns a new image and recycles img.
func sharpnessEnhance(img Image, factor float64) Image {
	out := img.Clone()
	if img.H < 3 || img.W < 3 {
		Recycle(img)
		return out
	}
	f := float32(factor)
	w := img.W
	for c := 0; c < img.C; c++ {
		src, dst := img.Plane(c), out.Plane(c)
		for y := 1; y < img.H-1; y++ {
			up, mid, down := src[(y-1)*w:y*w], src[y*w:(y+1)*w], src[(y+1)*w:(y+2)*w]
			for x := 1; x < w-1; x++ {
				s := up[x-1] + up[x] + up[x+1] + mid[x-1] + 5*mid[x] + mid[x+1] + down[x-1] + down[x] + down[x+1]
				dst[y*w+x] = blendToward(mid[x], s/13, f)
			}
		}
	}
	Recycle(img)
	return out
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
