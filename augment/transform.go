package augment

import "math/rand/v2"

// Transform maps an image to an image using rng for its random choices.
// Apply takes ownership of img (see the package documentation): it may modify
// img.Pix in place and return img, or return a new image and recycle img.
type Transform interface {
	Apply(img Image, rng *rand.Rand) Image
}

// Func adapts a function to a Transform.
type Func func(img Image, rng *rand.Rand) Image

// Apply calls f(img, rng).
func (f Func) Apply(img Image, rng *rand.Rand) Image { return f(img, rng) }

// Composed applies its transforms in order.
type Composed []Transform

// Apply runs every transform of c on img in order.
func (c Composed) Apply(img Image, rng *rand.Rand) Image {
	for _, t := range c {
		img = t.Apply(img, rng)
	}
	return img
}

// Compose returns a transform that applies ts in order, skipping nil entries.
func Compose(ts ...Transform) Transform {
	out := make(Composed, 0, len(ts))
	for _, t := range ts {
		switch t := t.(type) {
		case nil:
		case Composed:
			out = append(out, t...)
		default:
			out = append(out, t)
		}
	}
	return out
}

// Identity returns its input unchanged.
type Identity struct{}

// Apply returns img.
func (Identity) Apply(img Image, _ *rand.Rand) Image { return img }
