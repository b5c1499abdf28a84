package augment

import "math/rand/v2"

// ColorJitter changes brightness, contrast, saturation and hue by random
// factors in a random order, as torchvision's ColorJitter does: each factor
// f in {Brightness, Contrast, Saturation} draws uniformly from
// [max(0, 1-f), 1+f] (0 disables it), Hue draws a shift from [-Hue, Hue]
// turns (Hue <= 0.5). timm's color_jitter=0.4 is {0.4, 0.4, 0.4, 0}.
type ColorJitter struct {
	Brightness, Contrast, Saturation, Hue float64
}

// Apply jitters img in place (see ColorJitter).
func (cj ColorJitter) Apply(img Image, rng *rand.Rand) Image {
	order := rng.Perm(4)
	factor := func(f float64) float64 {
		if f <= 0 {
			return 1
		}
		return uniform(rng, max(0, 1-f), 1+f)
	}
	b, c, s := factor(cj.Brightness), factor(cj.Contrast), factor(cj.Saturation)
	h := 0.0
	if cj.Hue > 0 {
		h = uniform(rng, -cj.Hue, cj.Hue)
	}
	for _, op := range order {
		switch {
		case op == 0 && cj.Brightness > 0:
			img = brightnessEnhance(img, b)
		case op == 1 && cj.Contrast > 0:
			img = contrastEnhance(img, c)
		case op == 2 && cj.Saturation > 0:
			img = colorEnhance(img, s)
		case op == 3 && cj.Hue > 0:
			img = hueShift(img, h)
		}
	}
	return img
}
