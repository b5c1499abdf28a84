package augment

import (
	"fmt"
	"math/rand/v2"
)

// Source is an image not yet converted to float32 (decoded JPEG planes,
// raw bytes): its size is known, and Region converts any part of it, so
// that a transform that reads only a part (RandomResizedCrop) never has the
// whole image built.
type Source interface {
	// Size returns the image's channels, height and width.
	Size() (c, h, w int)
	// Region returns the (C, h, w) part whose top-left corner is
	// (top, left), with values in [0, 1], in a new Image from the pool; the
	// part lies inside the image.
	Region(top, left, h, w int) Image
}

// SourceTransform is a Transform that can take its input as a Source and
// convert only the part of it that it reads, with the same result and the
// same random draws as Apply on the whole image.
type SourceTransform interface {
	Transform
	ApplySource(src Source, rng *rand.Rand) Image
}

// Whole converts all of src.
func Whole(src Source) Image {
	_, h, w := src.Size()
	return src.Region(0, 0, h, w)
}

// ApplySource crops the region the crop draws from src's size and
// resamples that region alone (see resampleSource): the same image, and
// the same draws, as Apply, except where a ByteSource is read reduced.
func (r RandomResizedCrop) ApplySource(src Source, rng *rand.Rand) Image {
	return r.applySource(src, rng, nil)
}

// applySource is ApplySource followed by flip (when not nil), the flip
// drawn after the crop and done as the region is resampled.
func (r RandomResizedCrop) applySource(src Source, rng *rand.Rand, flip *HFlip) Image {
	_, ih, iw := src.Size()
	top, left, h, w := rrcParams(ih, iw, r.Scale, r.Ratio, rng)
	interp := r.Interp.pick(rng)
	flipped := flip != nil && rng.Float64() < flip.P
	return resampleSource(src, top, left, h, w, r.H, r.W, interp, flipped)
}

// ApplySource runs the first transform on src when it is a
// SourceTransform, on the whole image converted otherwise, then the rest.
// A RandomResizedCrop followed by an HFlip crops, resizes and flips in one
// pass over the region; a Resize followed by a CenterCrop resamples the
// crop's window alone.
func (c Composed) ApplySource(src Source, rng *rand.Rand) Image {
	if len(c) == 0 {
		return Whole(src)
	}
	if rrc, ok := c[0].(RandomResizedCrop); ok && len(c) > 1 {
		if flip, ok := c[1].(HFlip); ok {
			return c[2:].Apply(rrc.applySource(src, rng, &flip), rng)
		}
	}
	if r, ok := c[0].(Resize); ok && len(c) > 1 {
		if crop, ok := c[1].(CenterCrop); ok {
			return c[2:].Apply(r.applySource(src, rng, &crop), rng)
		}
	}
	return c[1:].Apply(applySource(c[0], src, rng), rng)
}

// applySource runs t on src, converting only what t reads when t is a
// SourceTransform (nil t: the whole image).
func applySource(t Transform, src Source, rng *rand.Rand) Image {
	if st, ok := t.(SourceTransform); ok {
		return st.ApplySource(src, rng)
	}
	img := Whole(src)
	if t == nil {
		return img
	}
	return t.Apply(img, rng)
}

// ProcessSource is Process on an image given as a Source: a transform that
// starts with RandomResizedCrop converts only the crop; otherwise the whole
// image is converted first. The result is Process's on Whole(src); a
// trailing RandAugment runs on the levels, as in Process.
func (p *Pipeline) ProcessSource(src Source, rng *rand.Rand, dst []float32) error {
	c, h, w := src.Size()
	if c <= 0 || h <= 0 || w <= 0 {
		return fmt.Errorf("augment: source of size C=%d H=%d W=%d is not positive", c, h, w)
	}
	head, tail := splitLevelTransforms(p.Transform)
	img := applySource(head, src, rng)
	if len(tail) == 0 {
		return p.finish(img, rng, dst)
	}
	return p.finishLevels(applyLevels(tail, toLevels(img), rng), rng, dst)
}
