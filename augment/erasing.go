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
	for range count {
		if b, ok := re.drawBox(img.H, img.W, count, rng); ok {
			re.fill(img, b, rng)
		}
	}
	return img
}

// eraseBox is the part of an image that RandomErasing overwrites: rows
// [top, top+h), columns [left, left+w).
type eraseBox struct{ top, left, h, w int }

// drawBox draws one of count boxes in an (ih, iw) image, ten tries at
// most; ok is false when no try fits.
func (re RandomErasing) drawBox(ih, iw, count int, rng *rand.Rand) (b eraseBox, ok bool) {
	area := float64(ih * iw)
	minAspect := re.MinAspect
	if minAspect <= 0 {
		minAspect = 0.3
	}
	logLo, logHi := math.Log(minAspect), math.Log(1/minAspect)
	for range 10 {
		target := uniform(rng, re.MinArea, re.MaxArea) * area / float64(count)
		ar := math.Exp(uniform(rng, logLo, logHi))
		h := roundHalfEven(math.Sqrt(target * ar))
		w := roundHalfEven(math.Sqrt(target / ar))
		if w < iw && h < ih {
			top := randInt(rng, 0, ih-h)
			left := randInt(rng, 0, iw-w)
			return eraseBox{top, left, h, w}, true
		}
	}
	return eraseBox{}, false
}

// fill writes the erase values into box b of img, channel by channel,
// row by row.
func (re RandomErasing) fill(img Image, b eraseBox, rng *rand.Rand) {
	for c := range img.C {
		plane := img.Plane(c)
		v := re.channelValue(rng)
		for y := b.top; y < b.top+b.h; y++ {
			re.eraseRow(plane[y*img.W+b.left:y*img.W+b.left+b.w], v, rng)
		}
	}
}

// channelValue draws the value of one channel's box: a standard-normal
// value for EraseRand, otherwise 0 (no draw).
func (re RandomErasing) channelValue(rng *rand.Rand) float32 {
	if re.Mode == EraseRand {
		return float32(rng.NormFloat64())
	}
	return 0
}

// eraseRow overwrites one row of a box: a standard-normal value per pixel
// for ErasePixel, v otherwise.
func (re RandomErasing) eraseRow(row []float32, v float32, rng *rand.Rand) {
	if re.Mode == ErasePixel {
		for x := range row {
			row[x] = float32(rng.NormFloat64())
		}
		return
	}
	fillSlice(row, v)
}
