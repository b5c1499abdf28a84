package augment

// The float forms of the level operations, for the tests: each runs the
// operation on a copy of img's levels and returns their values.

func onLevels(img Image, op func(levelImage) levelImage) Image {
	return toValues(op(toLevels(img.Clone())))
}

func autoContrast(img Image) Image { return onLevels(img, autoContrastLevels) }
func equalize(img Image) Image     { return onLevels(img, equalizeLevels) }
func invert(img Image) Image       { return onLevels(img, invertLevels) }

func posterize(img Image, bits int) Image {
	return onLevels(img, func(b levelImage) levelImage { return posterizeLevels(b, bits) })
}

func solarize(img Image, thresh int) Image {
	return onLevels(img, func(b levelImage) levelImage { return solarizeLevels(b, thresh) })
}

func solarizeAdd(img Image, add int) Image {
	return onLevels(img, func(b levelImage) levelImage { return solarizeAddLevels(b, add) })
}

func sharpness(img Image, factor float64) Image {
	return onLevels(img, func(b levelImage) levelImage { return sharpnessLevels(b, factor) })
}

func affine(img Image, m [6]float64, interp Interp, fill []float32) Image {
	fl := make([]uint8, len(fill))
	for i, v := range fill {
		fl[i] = uint8(levelOf(v))
	}
	return onLevels(img, func(b levelImage) levelImage {
		out := affineLevels(b, m, interp, fl)
		recycleBytes(b)
		return out
	})
}
