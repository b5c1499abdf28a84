package augment

import (
	"math"
	"math/rand/v2"
)

// EraseMode selects the values written into an erased box.
type EraseMode int

const (
	// EraseConst writes zeros (the mean after normalisation).
	EraseConst EraseMode = iota
	// EraseRand writes one standard-normal value per channel.
	EraseRand
	// ErasePixel writes a standard-normal value per pixel and channel (DeiT).
	ErasePixel
)

// RandomErasing erases a random box of a normalised image with probability
// Prob, as timm's RandomErasing does: the box area is uniform in
// [MinArea, MaxArea] of the image (divided by the number of boxes), its aspect
// ratio log-uniform in [MinAspect, 1/MinAspect], ten tries per box; Count > 1
// draws between 1 and Count boxes. It runs after normalisation (a Pipeline's
// PostNorm). DeiT: Prob 0.25, ErasePixel, Count 1.
type RandomErasing struct {
	Prob             float64
	MinArea, MaxArea float64
	MinAspect        float64
	Mode             EraseMode
	Count            int
}

// NewRandomErasing returns timm's RandomErasing(prob, mode) with its
// defaults: area 0.02–1/3, aspect 0.3–1/0.3, one box.
func NewRandomErasing(prob float64, mode EraseMode) RandomErasing {
	return RandomErasing{Prob: prob, MinArea: 0.02, MaxArea: 1. / 3, MinAspect: 0.3, Mode: mode, Count: 1}
}

// Apply erases in place (see RandomErasing).
func (re RandomErasing) Apply(img Image, rng *rand.Rand) Image {
	if rng.Float64() > re.Prob {
		return img
	}
	count := max(re.Count, 1)
	if count > 1 {
		count = randInt(rng, 1, count)
	}
	area := float64(img.H * img.W)
	minAspect := re.MinAspect
	if minAspect <= 0 {
		minAspect = 0.3
	}
	logLo, logHi := math.Log(minAspect), math.Log(1/minAspect)
	for range count {
		for range 10 {
			target := uniform(rng, re.MinArea, re.MaxArea) * area / float64(count)
			ar := math.Exp(uniform(rng, logLo, logHi))
			h := roundHalfEven(math.Sqrt(target * ar))
			w := roundHalfEven(math.Sqrt(target / ar))
			if w < img.W && h < img.H {
				top := randInt(rng, 0, img.H-h)
				left := randInt(rng, 0, img.W-w)
				re.fill(img, top, left, h, w, rng)
				break
			}
		}
	}
	return img
}

// fill writes the erase values into the (h, w) box at (top, left).
func (re RandomErasing) fill(img Image, top, left, h, w int, rng *rand.Rand) {
	for c := 0; c < img.C; c++ {
		plane := img.Plane(c)
		var v float32
		if re.Mode == EraseRand {
			v = float32(rng.NormFloat64())
		}
		for y := top; y < top+h; y++ {
			row := plane[y*img.W+left : y*img.W+left+w]
			if re.Mode == ErasePixel {
				for x := range row {
					row[x] = float32(rng.NormFloat64())
				}
			} else {
				fillSlice(row, v)
			}
		}
	}
}
