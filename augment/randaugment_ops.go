package augment

import "fmt"

// RandOp is one RandAugment operation, named as in timm's auto_augment.py.
type RandOp int

// The operations of timm's RandAugment. Magnitude m in [0, 10] maps to the
// argument as timm's *_level_to_arg functions do ("±" means the sign is
// flipped with probability 1/2):
//
//	AutoContrast, Equalize, Invert   no argument
//	Rotate                           ±30*m/10 degrees about the centre
//	Posterize                        keep int(4*m/10) bits
//	PosterizeIncreasing              keep 4 - int(4*m/10) bits
//	PosterizeOriginal                keep int(4*m/10) + 4 bits
//	Solarize                         invert levels >= int(256*m/10)
//	SolarizeIncreasing               invert levels >= 256 - int(256*m/10)
//	SolarizeAdd                      add int(110*m/10) to levels < 128
//	Color, Contrast, Brightness,
//	Sharpness                        factor 1.8*m/10 + 0.1
//	...Increasing variants           factor max(0.1, 1 ± 0.9*m/10)
//	ShearX, ShearY                   shear ±0.3*m/10
//	TranslateXRel, TranslateYRel     shift ±TranslatePct*m/10 of the width/height
const (
	OpAutoContrast RandOp = iota
	OpEqualize
	OpInvert
	OpRotate
	OpPosterize
	OpPosterizeIncreasing
	OpPosterizeOriginal
	OpSolarize
	OpSolarizeIncreasing
	OpSolarizeAdd
	OpColor
	OpColorIncreasing
	OpContrast
	OpContrastIncreasing
	OpBrightness
	OpBrightnessIncreasing
	OpSharpness
	OpSharpnessIncreasing
	OpShearX
	OpShearY
	OpTranslateXRel
	OpTranslateYRel
	numRandOps
)

var randOpNames = [numRandOps]string{
	"AutoContrast", "Equalize", "Invert", "Rotate",
	"Posterize", "PosterizeIncreasing", "PosterizeOriginal",
	"Solarize", "SolarizeIncreasing", "SolarizeAdd",
	"Color", "ColorIncreasing", "Contrast", "ContrastIncreasing",
	"Brightness", "BrightnessIncreasing", "Sharpness", "SharpnessIncreasing",
	"ShearX", "ShearY", "TranslateXRel", "TranslateYRel",
}

// String returns timm's name of the operation.
func (o RandOp) String() string {
	if o >= 0 && o < numRandOps {
		return randOpNames[o]
	}
	return fmt.Sprintf("RandOp(%d)", int(o))
}

// RandOps returns timm's _RAND_TRANSFORMS (increasing == false) or
// _RAND_INCREASING_TRANSFORMS (increasing == true, the "inc1" list used by
// DeiT's rand-m9-mstd0.5-inc1): 15 operations each.
func RandOps(increasing bool) []RandOp {
	if increasing {
		return []RandOp{
			OpAutoContrast, OpEqualize, OpInvert, OpRotate,
			OpPosterizeIncreasing, OpSolarizeIncreasing, OpSolarizeAdd,
			OpColorIncreasing, OpContrastIncreasing, OpBrightnessIncreasing, OpSharpnessIncreasing,
			OpShearX, OpShearY, OpTranslateXRel, OpTranslateYRel,
		}
	}
	return []RandOp{
		OpAutoContrast, OpEqualize, OpInvert, OpRotate,
		OpPosterize, OpSolarize, OpSolarizeAdd,
		OpColor, OpContrast, OpBrightness, OpSharpness,
		OpShearX, OpShearY, OpTranslateXRel, OpTranslateYRel,
	}
}

// randWeights0 is timm's _RAND_CHOICE_WEIGHTS_0 in the order of RandOps
// (timm applies it by position, to either list).
var randWeights0 = []float64{
	0.025, 0.005, 0, 0.3, // AutoContrast, Equalize, Invert, Rotate
	0, 0.005, 0.005, // Posterize, Solarize, SolarizeAdd
	0.025, 0.005, 0.005, 0.025, // Color, Contrast, Brightness, Sharpness
	0.2, 0.2, 0.1, 0.1, // ShearX, ShearY, TranslateXRel, TranslateYRel
}
