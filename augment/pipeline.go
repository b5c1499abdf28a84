package augment

import (
	"fmt"
	"math/rand/v2"
)

// Pipeline turns one decoded image into one normalised model input: Transform
// runs on the [0, 1] image, the result is normalised per channel,
// (v - Mean[c]) / Std[c], into the caller's buffer, and PostNorm (timm's
// RandomErasing) runs on the normalised values in that buffer.
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
	if p.Transform != nil {
		img = p.Transform.Apply(img, rng)
	}
	return p.finish(img, rng, dst)
}

// finish checks the transformed image, normalises it into dst and runs
// PostNorm; it recycles img.
func (p *Pipeline) finish(img Image, rng *rand.Rand, dst []float32) error {
	defer Recycle(img)
	if (p.Height > 0 && img.H != p.Height) || (p.Width > 0 && img.W != p.Width) {
		return fmt.Errorf("augment: pipeline produced a %dx%d image, want %dx%d", img.H, img.W, p.Height, p.Width)
	}
	if n := img.C * img.H * img.W; len(dst) != n || len(img.Pix) != n {
		return fmt.Errorf("augment: pipeline produced (C, H, W) = (%d, %d, %d) with %d values; the output holds %d", img.C, img.H, img.W, len(img.Pix), len(dst))
	}
	if err := normalize(img, p.Mean, p.Std, dst); err != nil {
		return err
	}
	if p.PostNorm != nil {
		view := Image{C: img.C, H: img.H, W: img.W, Pix: dst}
		out := p.PostNorm.Apply(view, rng)
		if len(out.Pix) != len(dst) {
			return fmt.Errorf("augment: PostNorm changed the image size to (%d, %d, %d)", out.C, out.H, out.W)
		}
		if &out.Pix[0] != &dst[0] {
			copy(dst, out.Pix)
		}
	}
	return nil
}

// normalize writes (img - mean[c]) / std[c] into dst.
func normalize(img Image, mean, std []float32, dst []float32) error {
	if len(mean) == 0 && len(std) == 0 {
		copy(dst, img.Pix)
		return nil
	}
	if len(mean) != len(std) || (len(mean) != 1 && len(mean) != img.C) {
		return fmt.Errorf("augment: normalise: %d means and %d stds for %d channels", len(mean), len(std), img.C)
	}
	n := img.H * img.W
	for c := 0; c < img.C; c++ {
		m, s := mean[0], std[0]
		if len(mean) > 1 {
			m, s = mean[c], std[c]
		}
		if !(s > 0) {
			return fmt.Errorf("augment: normalise: std[%d] = %g, want > 0", c, s)
		}
		inv := 1 / s
		src, out := img.Pix[c*n:(c+1)*n], dst[c*n:(c+1)*n]
		for i, v := range src {
			out[i] = (v - m) * inv
		}
	}
	return nil
}
