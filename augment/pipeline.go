package augment

import (
	"fmt"
	"math/rand/v2"
)

// Pipeline turns one decoded image into one normalised model input: Transform
// runs on the [0, 1] image, the result is normalised per channel,
// (v - Mean[c]) / Std[c], into the caller's buffer, and PostNorm (timm's
// RandomErasing) runs on the normalised values in that buffer.
//
// Transforms that work on 8-bit levels as PIL does (RandAugment) at the
// end of Transform run on the levels of the image the others give; the
// levels are then normalised into the buffer through a table, and a
// RandomErasing of one box is written in the same pass: the values, and
// the random draws, of running each step in turn.
type Pipeline struct {
	Transform Transform // nil: identity
	Mean, Std []float32 // one value per channel, or one for all; empty: no normalisation
	PostNorm  Transform // nil: none; must work in place on the normalised image
	// Height and Width are the output size; 0 means the transform keeps the
	// input size (fixed-size datasets only).
	Height, Width int
}

// Process runs the pipeline on img (which it consumes) and writes the
// (C, H, W) result into dst, len(dst) == C*H*W. It fails when the transformed
// image does not have the pipeline's size or does not fill dst exactly, or
// when Mean/Std do not match the channel count.
func (p *Pipeline) Process(img Image, rng *rand.Rand, dst []float32) error {
	head, tail := splitLevelTransforms(p.Transform)
	if head != nil {
		img = head.Apply(img, rng)
	}
	if len(tail) == 0 {
		return p.finish(img, rng, dst)
	}
	return p.finishLevels(applyLevels(tail, toLevels(img), rng), rng, dst)
}

// levelTransform is a Transform that works on 8-bit levels (RandAugment):
// its Apply runs applyLevels on the image's levels.
type levelTransform interface {
	Transform
	applyLevels(img levelImage, rng *rand.Rand) levelImage
}

// splitLevelTransforms splits t into the transforms before its trailing
// run of levelTransforms (nil when none) and that run.
func splitLevelTransforms(t Transform) (head Transform, tail []levelTransform) {
	c, ok := t.(Composed)
	if !ok {
		if lt, ok := t.(levelTransform); ok {
			return nil, []levelTransform{lt}
		}
		return t, nil
	}
	k := len(c)
	for k > 0 {
		if _, ok := c[k-1].(levelTransform); !ok {
			break
		}
		k--
	}
	for _, t := range c[k:] {
		tail = append(tail, t.(levelTransform))
	}
	if k > 0 {
		head = c[:k]
	}
	return head, tail
}

// applyLevels runs ts in turn on img.
func applyLevels(ts []levelTransform, img levelImage, rng *rand.Rand) levelImage {
	for _, t := range ts {
		img = t.applyLevels(img, rng)
	}
	return img
}

// checkSize checks that a transformed (c, h, w) image of n values has the
// pipeline's size and fills dst exactly.
func (p *Pipeline) checkSize(c, h, w, n int, dst []float32) error {
	if (p.Height > 0 && h != p.Height) || (p.Width > 0 && w != p.Width) {
		return fmt.Errorf("augment: pipeline produced a %dx%d image, want %dx%d", h, w, p.Height, p.Width)
	}
	if len(dst) != c*h*w || n != c*h*w {
		return fmt.Errorf("augment: pipeline produced (C, H, W) = (%d, %d, %d) with %d values; the output holds %d", c, h, w, n, len(dst))
	}
	return nil
}

// finish checks the transformed image, normalises it into dst and runs
// PostNorm; it recycles img.
func (p *Pipeline) finish(img Image, rng *rand.Rand, dst []float32) error {
	defer Recycle(img)
	if err := p.checkSize(img.C, img.H, img.W, len(img.Pix), dst); err != nil {
		return err
	}
	if err := normalize(img, p.Mean, p.Std, dst); err != nil {
		return err
	}
	return p.postNorm(img.C, img.H, img.W, rng, dst)
}

// postNorm runs PostNorm on the normalised (c, h, w) image in dst.
func (p *Pipeline) postNorm(c, h, w int, rng *rand.Rand, dst []float32) error {
	if p.PostNorm == nil {
		return nil
	}
	view := Image{C: c, H: h, W: w, Pix: dst}
	out := p.PostNorm.Apply(view, rng)
	if len(out.Pix) != len(dst) {
		return fmt.Errorf("augment: PostNorm changed the image size to (%d, %d, %d)", out.C, out.H, out.W)
	}
	if &out.Pix[0] != &dst[0] {
		copy(dst, out.Pix)
	}
	return nil
}

// finishLevels checks the transformed image of levels and writes it into
// dst normalised, each channel's plane followed by its part of PostNorm's
// box when PostNorm is a RandomErasing of one box (the box drawn first),
// or followed by PostNorm otherwise; it recycles img.
func (p *Pipeline) finishLevels(img levelImage, rng *rand.Rand, dst []float32) error {
	defer recycleBytes(img)
	if err := p.checkSize(img.C, img.H, img.W, len(img.Pix), dst); err != nil {
		return err
	}
	re, fused := p.PostNorm.(RandomErasing)
	fused = fused && re.Count <= 1
	var box eraseBox
	erase := false
	if fused && rng.Float64() <= re.Prob {
		box, erase = re.drawBox(img.H, img.W, 1, rng)
	}
	n := img.H * img.W
	for c := range img.C {
		m, inv, err := channelNorm(c, img.C, p.Mean, p.Std)
		if err != nil {
			return err
		}
		out := dst[c*n : (c+1)*n]
		normLevels(out, img.Plane(c), m, inv)
		if !erase {
			continue
		}
		v := re.channelValue(rng)
		for y := box.top; y < box.top+box.h; y++ {
			re.eraseRow(out[y*img.W+box.left:y*img.W+box.left+box.w], v, rng)
		}
	}
	if fused {
		return nil
	}
	return p.postNorm(img.C, img.H, img.W, rng, dst)
}

// channelNorm returns channel c's mean and 1/std of a c-channel image,
// (0, 1) when mean and std are empty.
func channelNorm(c, channels int, mean, std []float32) (m, inv float32, err error) {
	if len(mean) == 0 && len(std) == 0 {
		return 0, 1, nil
	}
	if len(mean) != len(std) || (len(mean) != 1 && len(mean) != channels) {
		return 0, 0, fmt.Errorf("augment: normalise: %d means and %d stds for %d channels", len(mean), len(std), channels)
	}
	m, s := mean[0], std[0]
	if len(mean) > 1 {
		m, s = mean[c], std[c]
	}
	if !(s > 0) {
		return 0, 0, fmt.Errorf("augment: normalise: std[%d] = %g, want > 0", c, s)
	}
	return m, 1 / s, nil
}

// normalize writes (img - mean[c]) / std[c] into dst.
func normalize(img Image, mean, std []float32, dst []float32) error {
	if len(mean) == 0 && len(std) == 0 {
		copy(dst, img.Pix)
		return nil
	}
	for c := range img.C {
		m, inv, err := channelNorm(c, img.C, mean, std)
		if err != nil {
			return err
		}
		n := img.H * img.W
		normFloats(dst[c*n:(c+1)*n], img.Plane(c), m, inv)
	}
	return nil
}

// normFloats sets dst[i] = (src[i] - mean)·inv: normFloatsGeneric, or its
// AVX2 version (the same values) where the processor has AVX2.
var normFloats = normFloatsGeneric

// normFloatsGeneric sets dst[i] = (src[i] - mean)·inv, each operation
// rounded to float32.
func normFloatsGeneric(dst, src []float32, mean, inv float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = float32(float32(v-mean) * inv)
	}
}
