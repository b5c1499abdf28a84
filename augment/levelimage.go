package augment

// levelImage is a planar (C, H, W) image of 8-bit levels, as PIL holds an
// image: pixel (c, y, x) is Pix[(c*H+y)*W+x], its value level/255. The
// operations RandAugment takes from PIL work on it, rounding and clipping
// to levels as PIL does.
type levelImage struct {
	C, H, W int
	Pix     []uint8
}

// Plane returns channel c as a slice of H*W levels (row-major, (H, W)).
func (m levelImage) Plane(c int) []uint8 {
	n := m.H * m.W
	return m.Pix[c*n : (c+1)*n]
}

// toLevels returns img's levels, round(v*255) clipped to [0, 255], in a
// new (C, H, W) levelImage from the pool, and recycles img.
func toLevels(img Image) levelImage {
	out := newLevelImage(img.C, img.H, img.W)
	levelsOf(out.Pix, img.Pix)
	Recycle(img)
	return out
}

// levelsOf sets dst[i] to the level of src[i] (levelOf): levelsOfGeneric,
// or its AVX2 version (the same values) where the processor has AVX2.
var levelsOf = levelsOfGeneric

// levelsOfGeneric sets dst[i] to levelOf(src[i]).
func levelsOfGeneric(dst []uint8, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = uint8(levelOf(v))
	}
}

// normLevels sets dst[i] to the normalised value of level src[i],
// (src[i]/255 - mean)·inv: normLevelsGeneric, or its AVX2 version (the
// same values) where the processor has AVX2.
var normLevels = normLevelsGeneric

// normLevelsGeneric sets dst[i] = (float32(src[i])/255 - mean)·inv, each
// operation rounded to float32: the value normalize gives level src[i]'s
// value levelValue[src[i]].
func normLevelsGeneric(dst []float32, src []uint8, mean, inv float32) {
	dst = dst[:len(src)]
	for i, l := range src {
		dst[i] = float32(float32(float32(l)/255-mean) * inv)
	}
}

// toValues returns img's values, level/255, in a new (C, H, W) Image from
// the pool, and recycles img.
func toValues(img levelImage) Image {
	out := NewImage(img.C, img.H, img.W)
	for i, l := range img.Pix {
		out.Pix[i] = levelValue[l]
	}
	recycleBytes(img)
	return out
}
