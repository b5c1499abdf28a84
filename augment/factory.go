package augment

import (
	"fmt"
	"math"
	"strings"
)

// CropMode selects the training crop.
type CropMode int

const (
	// CropRRC is RandomResizedCrop(Size, Scale, Ratio) (ImageNet).
	CropRRC CropMode = iota
	// CropPad resizes to Size when the image differs, then RandomCrop(Size,
	// padding=Padding) (the CIFAR standard, DeiT's rule for inputs <= 32 px).
	CropPad
)

// TrainConfig describes a training pipeline as timm's create_transform
// (is_training=True) arguments do. Zero values mean "off" except where noted;
// DeiTTrainConfig fills in DeiT's values.
type TrainConfig struct {
	Size        int        // output height and width
	Crop        CropMode   // CropRRC (ImageNet) or CropPad (small images)
	Scale       [2]float64 // CropRRC area range; zero: {0.08, 1}
	Ratio       [2]float64 // CropRRC aspect range; zero: {3/4, 4/3}
	Padding     int        // CropPad padding; zero: 4
	HFlip       float64    // flip probability
	ColorJitter float64    // brightness/contrast/saturation jitter; ignored when AutoAugment is set, as in timm
	AutoAugment string     // e.g. "rand-m9-mstd0.5-inc1"; "" for none
	Interp      Interp     // resampling filter of the crop and of RandAugment's geometric ops
	Mean, Std   []float32  // per-channel normalisation
	REProb      float64    // random erasing probability (after normalisation)
	REMode      EraseMode  // random erasing fill
	RECount     int        // zero: 1
}

// DeiTTrainConfig returns DeiT's training pipeline: RandomResizedCrop
// (pad-crop for size <= 32, DeiT's rule), flip 0.5, RandAugment
// rand-m9-mstd0.5-inc1, bicubic, RandomErasing 0.25 per-pixel, one box.
func DeiTTrainConfig(size int, mean, std []float32) TrainConfig {
	cfg := TrainConfig{
		Size: size, HFlip: 0.5, ColorJitter: 0.4, AutoAugment: "rand-m9-mstd0.5-inc1",
		Interp: Bicubic, Mean: mean, Std: std, REProb: 0.25, REMode: ErasePixel, RECount: 1,
	}
	if size <= 32 {
		cfg.Crop = CropPad
	}
	return cfg
}

// TrainPipeline builds the training pipeline: crop (RandomResizedCrop or
// pad-crop), horizontal flip, then RandAugment or colour jitter, normalise,
// then random erasing.
func TrainPipeline(cfg TrainConfig) (Pipeline, error) {
	if cfg.Size <= 0 {
		return Pipeline{}, fmt.Errorf("augment: train pipeline: Size = %d, want > 0", cfg.Size)
	}
	var ts []Transform
	switch cfg.Crop {
	case CropRRC:
		rrc := NewRandomResizedCrop(cfg.Size, cfg.Interp)
		if cfg.Scale != [2]float64{} {
			rrc.Scale = cfg.Scale
		}
		if cfg.Ratio != [2]float64{} {
			rrc.Ratio = cfg.Ratio
		}
		if !(rrc.Scale[0] > 0 && rrc.Scale[0] <= rrc.Scale[1] && rrc.Ratio[0] > 0 && rrc.Ratio[0] <= rrc.Ratio[1]) {
			return Pipeline{}, fmt.Errorf("augment: train pipeline: scale %v and ratio %v must be positive (min, max) ranges", rrc.Scale, rrc.Ratio)
		}
		ts = append(ts, rrc)
	case CropPad:
		pad := cfg.Padding
		if pad == 0 {
			pad = 4
		}
		ts = append(ts, ResizeTo{H: cfg.Size, W: cfg.Size, Interp: cfg.Interp}, RandomCrop{H: cfg.Size, W: cfg.Size, Padding: pad})
	default:
		return Pipeline{}, fmt.Errorf("augment: train pipeline: unknown crop mode %d", cfg.Crop)
	}
	if cfg.HFlip > 0 {
		ts = append(ts, HFlip{P: cfg.HFlip})
	}
	switch {
	case cfg.AutoAugment != "":
		ra, err := autoAugment(cfg)
		if err != nil {
			return Pipeline{}, err
		}
		ts = append(ts, ra)
	case cfg.ColorJitter > 0:
		ts = append(ts, ColorJitter{Brightness: cfg.ColorJitter, Contrast: cfg.ColorJitter, Saturation: cfg.ColorJitter})
	}
	p := Pipeline{Transform: Compose(ts...), Mean: cfg.Mean, Std: cfg.Std, Height: cfg.Size, Width: cfg.Size}
	if cfg.REProb > 0 {
		re := NewRandomErasing(cfg.REProb, cfg.REMode)
		re.Count = max(cfg.RECount, 1)
		p.PostNorm = re
	}
	return p, nil
}

// autoAugment builds the policy named by cfg.AutoAugment with timm's
// hparams: the pipeline's filter (drawn per op when random) and the mean
// colour as fill.
func autoAugment(cfg TrainConfig) (Transform, error) {
	if !strings.HasPrefix(cfg.AutoAugment, "rand") {
		return nil, fmt.Errorf("augment: auto-augment policy %q is not supported (only RandAugment \"rand-...\" strings)", cfg.AutoAugment)
	}
	fill := make([]float32, len(cfg.Mean))
	for i, m := range cfg.Mean {
		fill[i] = float32(min(255, roundHalfEven(255*float64(m)))) / 255
	}
	return ParseRandAugment(cfg.AutoAugment, AugHParams{Interp: cfg.Interp, Fill: fill})
}

// EvalConfig describes an evaluation pipeline (timm's create_transform with
// is_training=False).
type EvalConfig struct {
	Size      int       // output height and width
	CropPct   float64   // zero: 0.875
	Interp    Interp    // resize filter (RandomInterp means Bilinear)
	Mean, Std []float32 // per-channel normalisation
}

// SmallInput is the largest input size that the evaluation pipeline resizes
// whole instead of resizing and centre-cropping (DeiT's rule).
const SmallInput = 32

// EvalPipeline builds the evaluation pipeline: for Size > SmallInput,
// Resize(floor(Size/CropPct)) of the shorter side then CenterCrop(Size)
// (256 then 224 for 224); for small inputs (Size <= SmallInput) only a resize to
// Size x Size when the image differs, as DeiT does. Then normalise.
func EvalPipeline(cfg EvalConfig) (Pipeline, error) {
	if cfg.Size <= 0 {
		return Pipeline{}, fmt.Errorf("augment: eval pipeline: Size = %d, want > 0", cfg.Size)
	}
	pct := cfg.CropPct
	if pct == 0 {
		pct = 0.875
	}
	if !(pct > 0 && pct <= 1) {
		return Pipeline{}, fmt.Errorf("augment: eval pipeline: CropPct = %g, want (0, 1]", cfg.CropPct)
	}
	if cfg.Interp == RandomInterp {
		cfg.Interp = Bilinear // timm: random interpolation is not used for eval
	}
	var t Transform
	if cfg.Size <= SmallInput {
		t = ResizeTo{H: cfg.Size, W: cfg.Size, Interp: cfg.Interp}
	} else {
		scale := int(math.Floor(float64(cfg.Size) / pct))
		t = Compose(Resize{Size: scale, Interp: cfg.Interp}, CenterCrop{H: cfg.Size, W: cfg.Size})
	}
	return Pipeline{Transform: t, Mean: cfg.Mean, Std: cfg.Std, Height: cfg.Size, Width: cfg.Size}, nil
}
