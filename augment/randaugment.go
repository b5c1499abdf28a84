package augment

import (
	"math"
	"math/rand/v2"
)

// RandAugment applies NumLayers operations drawn from Ops, each with
// probability Prob, at magnitude Magnitude (plus Gaussian noise of std
// MagnitudeStd, clipped to [0, MagnitudeMax]), as timm's RandAugment does.
// Build it with [ParseRandAugment] from a timm string such as
// "rand-m9-mstd0.5-inc1" (DeiT's policy).
type RandAugment struct {
	Ops          []RandOp  // candidate operations
	NumLayers    int       // operations drawn per image
	Magnitude    float64   // magnitude on timm's 0–10 scale
	MagnitudeStd float64   // 0: fixed magnitude; +Inf: uniform in [0, Magnitude]
	MagnitudeMax float64   // upper clip of the magnitude (timm default 10)
	Prob         float64   // probability that each drawn operation runs (timm 0.5)
	Weights      []float64 // one per op: weighted draws without replacement; nil (or another length): uniform with replacement
	TranslatePct float64   // TranslateXRel/YRel range at magnitude 10 (timm 0.45)
	Interp       Interp    // filter of Rotate/Shear/Translate (RandomInterp: drawn per operation)
	Fill         []float32 // per-channel fill of Rotate/Shear/Translate, in [0, 1]; other lengths give 128/255
}

// Apply runs the policy on img (see RandAugment): on its levels,
// round(v*255), as PIL runs timm's policy, so the result holds levels
// (values level/255).
func (ra *RandAugment) Apply(img Image, rng *rand.Rand) Image {
	if len(ra.Ops) == 0 {
		return img
	}
	return toValues(ra.applyLevels(toLevels(img), rng))
}

// applyLevels runs the policy on an image of levels (which it consumes).
func (ra *RandAugment) applyLevels(img levelImage, rng *rand.Rand) levelImage {
	if len(ra.Ops) == 0 {
		return img
	}
	if len(ra.Weights) != len(ra.Ops) {
		for range ra.NumLayers {
			img = ra.applyOp(ra.Ops[rng.IntN(len(ra.Ops))], img, rng)
		}
		return img
	}
	used := make([]bool, len(ra.Ops))
	for range min(ra.NumLayers, len(ra.Ops)) {
		k := weightedPick(ra.Weights, used, rng)
		if k < 0 {
			break
		}
		used[k] = true
		img = ra.applyOp(ra.Ops[k], img, rng)
	}
	return img
}

// weightedPick draws an index with probability proportional to w among the
// indices not yet used; -1 when no weight is left.
func weightedPick(w []float64, used []bool, rng *rand.Rand) int {
	total := 0.0
	for i, x := range w[:len(used)] {
		if !used[i] {
			total += x
		}
	}
	if total <= 0 {
		return -1
	}
	u := rng.Float64() * total
	last := -1
	for i, x := range w[:len(used)] {
		if used[i] || x <= 0 {
			continue
		}
		last = i
		if u < x {
			return i
		}
		u -= x
	}
	return last
}

// magnitude draws the magnitude of one operation.
func (ra *RandAugment) magnitude(rng *rand.Rand) float64 {
	m := ra.Magnitude
	switch {
	case math.IsInf(ra.MagnitudeStd, 1):
		m = uniform(rng, 0, m)
	case ra.MagnitudeStd > 0:
		m += ra.MagnitudeStd * rng.NormFloat64()
	}
	upper := ra.MagnitudeMax
	if upper <= 0 {
		upper = 10
	}
	return max(0, min(m, upper))
}

// negate flips the sign of v with probability 1/2 (timm's _randomly_negate).
func negate(v float64, rng *rand.Rand) float64 {
	if rng.Float64() > 0.5 {
		return -v
	}
	return v
}

// applyOp runs one operation with timm's draw order: apply-probability,
// magnitude, sign, then interpolation.
func (ra *RandAugment) applyOp(op RandOp, img levelImage, rng *rand.Rand) levelImage {
	if ra.Prob < 1 && rng.Float64() > ra.Prob {
		return img
	}
	lv := ra.magnitude(rng) / 10
	switch op {
	case OpAutoContrast:
		return autoContrastLevels(img)
	case OpEqualize:
		return equalizeLevels(img)
	case OpInvert:
		return invertLevels(img)
	case OpRotate:
		deg := negate(lv*30, rng)
		return ra.geometric(img, rotateMatrix(img.H, img.W, deg), rng)
	case OpPosterize:
		return posterizeLevels(img, int(lv*4))
	case OpPosterizeIncreasing:
		return posterizeLevels(img, 4-int(lv*4))
	case OpPosterizeOriginal:
		return posterizeLevels(img, int(lv*4)+4)
	case OpSolarize:
		return solarizeLevels(img, int(lv*256))
	case OpSolarizeIncreasing:
		return solarizeLevels(img, 256-int(lv*256))
	case OpSolarizeAdd:
		return solarizeAddLevels(img, int(lv*110))
	case OpColor:
		return colorLevels(img, lv*1.8+0.1)
	case OpColorIncreasing:
		return colorLevels(img, increasingFactor(lv, rng))
	case OpContrast:
		return contrastLevels(img, lv*1.8+0.1)
	case OpContrastIncreasing:
		return contrastLevels(img, increasingFactor(lv, rng))
	case OpBrightness:
		return brightnessLevels(img, lv*1.8+0.1)
	case OpBrightnessIncreasing:
		return brightnessLevels(img, increasingFactor(lv, rng))
	case OpSharpness:
		return sharpnessLevels(img, lv*1.8+0.1)
	case OpSharpnessIncreasing:
		return sharpnessLevels(img, increasingFactor(lv, rng))
	case OpShearX:
		s := negate(lv*0.3, rng)
		return ra.geometric(img, [6]float64{1, s, 0, 0, 1, 0}, rng)
	case OpShearY:
		s := negate(lv*0.3, rng)
		return ra.geometric(img, [6]float64{1, 0, 0, s, 1, 0}, rng)
	case OpTranslateXRel:
		px := negate(lv*ra.translatePct(), rng) * float64(img.W)
		return ra.geometric(img, [6]float64{1, 0, px, 0, 1, 0}, rng)
	case OpTranslateYRel:
		px := negate(lv*ra.translatePct(), rng) * float64(img.H)
		return ra.geometric(img, [6]float64{1, 0, 0, 0, 1, px}, rng)
	}
	return img
}

// increasingFactor is timm's _enhance_increasing_level_to_arg.
func increasingFactor(lv float64, rng *rand.Rand) float64 {
	return max(0.1, 1+negate(lv*0.9, rng))
}

func (ra *RandAugment) translatePct() float64 {
	if ra.TranslatePct > 0 {
		return ra.TranslatePct
	}
	return 0.45
}

// defaultFill is timm's _FILL, level 128 in every channel.
const defaultFill = 128

// geometric applies an affine map with the policy's filter and fill.
func (ra *RandAugment) geometric(img levelImage, m [6]float64, rng *rand.Rand) levelImage {
	var fill [4]uint8
	fl := fill[:0]
	for c := range img.C {
		l := uint8(defaultFill)
		if len(ra.Fill) == img.C {
			l = uint8(levelOf(ra.Fill[c]))
		}
		fl = append(fl, l)
	}
	out := affineLevels(img, m, ra.Interp.pick(rng), fl)
	recycleBytes(img)
	return out
}
