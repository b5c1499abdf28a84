package augment

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Mixup mixes a batch with itself reversed (image i with image B-1-i), as
// timm's Mixup in its default "batch" mode: with probability Prob the batch
// is mixed; when both alphas are positive CutMix is chosen with probability
// SwitchProb, else Mixup. Mixup blends whole images with
// lam ~ Beta(MixupAlpha, MixupAlpha); CutMix pastes a box of area about
// 1-lam, lam ~ Beta(CutmixAlpha, CutmixAlpha), and with CorrectLam sets lam
// to the exact unpasted fraction after clipping the box to the image. The
// targets are lam*onehot(y_i) + (1-lam)*onehot(y_{B-1-i}), label-smoothed.
type Mixup struct {
	MixupAlpha     float64
	CutmixAlpha    float64
	Prob           float64
	SwitchProb     float64
	LabelSmoothing float64
	CorrectLam     bool
	Classes        int
}

// NewDeiTMixup returns DeiT's setting: mixup α 0.8, cutmix α 1.0, prob 1,
// switch prob 0.5, label smoothing 0.1, lam correction on.
func NewDeiTMixup(classes int) Mixup {
	return Mixup{MixupAlpha: 0.8, CutmixAlpha: 1, Prob: 1, SwitchProb: 0.5, LabelSmoothing: 0.1, CorrectLam: true, Classes: classes}
}

// MixInfo describes what Mixup.Apply did.
type MixInfo struct {
	Lam    float64 // weight of each image's own label; 1 when nothing was mixed
	CutMix bool    // CutMix (true) or Mixup (false)
	// Box is the pasted CutMix region, rows [Y0, Y1) and columns [X0, X1).
	Y0, Y1, X0, X1 int
}

// Apply mixes images, a (B, C, H, W) batch with B = len(labels), in place and
// writes the soft targets (B, Classes) into targets. The draws come from rng.
// B may be odd (timm requires it even): the middle image is then paired with
// itself and keeps its own content and label.
func (m Mixup) Apply(images []float32, c, h, w int, labels []int, targets []float32, rng *rand.Rand) (MixInfo, error) {
	b := len(labels)
	if err := m.check(len(images), b, c, h, w); err != nil {
		return MixInfo{}, err
	}
	info := m.params(rng)
	if info.Lam != 1 {
		if info.CutMix {
			info.Y0, info.Y1, info.X0, info.X1 = cutmixBox(h, w, info.Lam, rng)
			if m.CorrectLam {
				info.Lam = 1 - float64((info.Y1-info.Y0)*(info.X1-info.X0))/float64(h*w)
			}
			swapBoxes(images, b, c, h, w, info)
		} else {
			blendPairs(images[:b*c*h*w], b, c*h*w, float32(info.Lam))
		}
	}
	return info, mixTargets(labels, m.Classes, m.LabelSmoothing, info.Lam, targets)
}

func (m Mixup) check(n, b, c, h, w int) error {
	switch {
	case m.Classes <= 0:
		return fmt.Errorf("augment: mixup: Classes = %d, want > 0", m.Classes)
	case m.MixupAlpha < 0 || m.CutmixAlpha < 0 || (m.MixupAlpha == 0 && m.CutmixAlpha == 0):
		return fmt.Errorf("augment: mixup: alphas mixup=%g cutmix=%g: both must be >= 0 and one > 0", m.MixupAlpha, m.CutmixAlpha)
	case c <= 0 || h <= 0 || w <= 0:
		return fmt.Errorf("augment: mixup: image size C=%d H=%d W=%d not positive", c, h, w)
	case n < b*c*h*w:
		return fmt.Errorf("augment: mixup: images hold %d values, want B*C*H*W = %d*%d*%d*%d", n, b, c, h, w)
	}
	return nil
}

// params draws (lam, cutmix) as timm's _params_per_batch.
func (m Mixup) params(rng *rand.Rand) MixInfo {
	info := MixInfo{Lam: 1}
	if rng.Float64() >= m.Prob {
		return info
	}
	switch {
	case m.MixupAlpha > 0 && m.CutmixAlpha > 0:
		info.CutMix = rng.Float64() < m.SwitchProb
		if info.CutMix {
			info.Lam = betaSample(rng, m.CutmixAlpha, m.CutmixAlpha)
		} else {
			info.Lam = betaSample(rng, m.MixupAlpha, m.MixupAlpha)
		}
	case m.MixupAlpha > 0:
		info.Lam = betaSample(rng, m.MixupAlpha, m.MixupAlpha)
	default:
		info.CutMix = true
		info.Lam = betaSample(rng, m.CutmixAlpha, m.CutmixAlpha)
	}
	return info
}

// cutmixBox is timm's rand_bbox: a box of sides int(H*sqrt(1-lam)),
// int(W*sqrt(1-lam)) centred at a uniform pixel, clipped to the image.
func cutmixBox(h, w int, lam float64, rng *rand.Rand) (y0, y1, x0, x1 int) {
	ratio := math.Sqrt(1 - lam)
	ch, cw := int(float64(h)*ratio), int(float64(w)*ratio)
	cy, cx := rng.IntN(h), rng.IntN(w)
	y0, y1 = min(max(cy-ch/2, 0), h), min(max(cy+ch/2, 0), h)
	x0, x1 = min(max(cx-cw/2, 0), w), min(max(cx+cw/2, 0), w)
	return
}

// blendPairs sets x_i = lam*x_i + (1-lam)*x_{B-1-i} for every i, each image
// being size values.
func blendPairs(x []float32, b, size int, lam float32) {
	for i := 0; i < b/2; i++ {
		j := b - 1 - i
		xi, xj := x[i*size:(i+1)*size], x[j*size:(j+1)*size]
		xj = xj[:len(xi)]
		for k, a := range xi {
			bb := xj[k]
			xi[k] = lam*a + (1-lam)*bb
			xj[k] = lam*bb + (1-lam)*a
		}
	}
}

// swapBoxes exchanges the CutMix box between images i and B-1-i.
func swapBoxes(x []float32, b, c, h, w int, info MixInfo) {
	size := c * h * w
	for i := 0; i < b/2; i++ {
		j := b - 1 - i
		for ch := 0; ch < c; ch++ {
			for y := info.Y0; y < info.Y1; y++ {
				ri := x[i*size+(ch*h+y)*w+info.X0 : i*size+(ch*h+y)*w+info.X1]
				rj := x[j*size+(ch*h+y)*w+info.X0 : j*size+(ch*h+y)*w+info.X1]
				for k := range ri {
					ri[k], rj[k] = rj[k], ri[k]
				}
			}
		}
	}
}
