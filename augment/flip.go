package augment

import "math/rand/v2"

// HFlip mirrors the image left-right with probability P (torchvision's
// RandomHorizontalFlip, P = 0.5 by default there).
type HFlip struct {
	P float64
}

// Apply flips img in place with probability h.P.
func (h HFlip) Apply(img Image, rng *rand.Rand) Image {
	if rng.Float64() < h.P {
		flipRows(img)
	}
	return img
}

// flipRows mirrors every row of img in place.
func flipRows(img Image) {
	for r := 0; r < img.C*img.H; r++ {
		row := img.Pix[r*img.W : (r+1)*img.W]
		for i, j := 0, len(row)-1; i < j; i, j = i+1, j-1 {
			row[i], row[j] = row[j], row[i]
		}
	}
}
