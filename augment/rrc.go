package augment

import (
	"math"
	"math/rand/v2"
)

// RandomResizedCrop cuts a region of random area (Scale, a fraction of the
// image area) and aspect ratio (Ratio, w/h, drawn log-uniformly) and resizes
// it to (H, W), as timm's RandomResizedCropAndInterpolation does: ten tries,
// then a central crop clamped to Ratio.
type RandomResizedCrop struct {
	H, W   int
	Scale  [2]float64 // area fraction range, timm default {0.08, 1}
	Ratio  [2]float64 // aspect ratio range, timm default {3/4, 4/3}
	Interp Interp
}

// NewRandomResizedCrop returns the timm/DeiT default crop to (size, size):
// scale 0.08–1, ratio 3/4–4/3.
func NewRandomResizedCrop(size int, interp Interp) RandomResizedCrop {
	return RandomResizedCrop{H: size, W: size, Scale: [2]float64{0.08, 1}, Ratio: [2]float64{3. / 4, 4. / 3}, Interp: interp}
}

// Apply crops and resizes img (see RandomResizedCrop).
func (r RandomResizedCrop) Apply(img Image, rng *rand.Rand) Image {
	top, left, h, w := rrcParams(img.H, img.W, r.Scale, r.Ratio, rng)
	interp := r.Interp.pick(rng)
	out := resampleCrop(img, top, left, h, w, r.H, r.W, interp)
	Recycle(img)
	return out
}

// rrcParams draws the crop (top, left, h, w) of an (imgH, imgW) image.
func rrcParams(imgH, imgW int, scale, ratio [2]float64, rng *rand.Rand) (top, left, h, w int) {
	area := float64(imgH * imgW)
	logR0, logR1 := math.Log(ratio[0]), math.Log(ratio[1])
	for range 10 {
		target := uniform(rng, scale[0], scale[1]) * area
		ar := math.Exp(uniform(rng, logR0, logR1))
		w = roundHalfEven(math.Sqrt(target * ar))
		h = roundHalfEven(math.Sqrt(target / ar))
		if w <= imgW && h <= imgH && w > 0 && h > 0 {
			top = randInt(rng, 0, imgH-h)
			left = randInt(rng, 0, imgW-w)
			return top, left, h, w
		}
	}
	inRatio := float64(imgW) / float64(imgH)
	switch {
	case inRatio < min(ratio[0], ratio[1]):
		w = imgW
		h = roundHalfEven(float64(w) / min(ratio[0], ratio[1]))
	case inRatio > max(ratio[0], ratio[1]):
		h = imgH
		w = roundHalfEven(float64(h) * max(ratio[0], ratio[1]))
	default:
		w, h = imgW, imgH
	}
	h, w = max(min(h, imgH), 1), max(min(w, imgW), 1)
	return (imgH - h) / 2, (imgW - w) / 2, h, w
}
