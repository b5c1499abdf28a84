package train

import (
	"fmt"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// defaultPreprocessing is timm's evaluation preprocessing for a model
// without a pretrained configuration (resolve_data_config: crop_pct
// DEFAULT_CROP_PCT, bicubic): what a checkpoint that records neither its
// preprocessing nor a run configuration is evaluated with.
var defaultPreprocessing = checkpoint.Preprocessing{CropPct: 0.875, Interpolation: augment.Bicubic}

// PreprocessOverrides are the command line's overrides of a checkpoint's
// evaluation preprocessing, timm's --crop-pct and --interpolation; zero
// values keep the checkpoint's.
type PreprocessOverrides struct {
	CropPct       float64 // > 0 replaces the crop fraction
	Interpolation string  // "bilinear" or "bicubic" replaces the resize filter
}

// runPreprocessing is the evaluation preprocessing of a training run with
// the augmentation settings aug: aug.crop_pct and bicubic (DeiT's). The
// run validates with it and its checkpoints record it.
func runPreprocessing(aug AugConfig) checkpoint.Preprocessing {
	return checkpoint.Preprocessing{CropPct: aug.CropPct, Interpolation: augment.Bicubic}
}

// EvalPreprocessing resolves how the checkpoint's network, of input size
// size × size, takes its images, as timm's resolve_data_config does:
// eval, logits, predict, attention, a distillation teacher and the ONNX
// export all take their preprocessing from here, and the training run
// that wrote the checkpoint validated with it.
//
// The crop fraction and the interpolation are, in this order, o's; those
// the checkpoint records (checkpoint.File.Eval); for a checkpoint written
// before they were recorded, its run configuration's (aug.crop_pct,
// bicubic); else timm's defaults (0.875, bicubic). The mean and std are the
// checkpoint's or, when it records none, those of data (nil: the data of
// the checkpoint's run configuration, opened here). Errors name the
// override and its value.
func (c *Checkpoint) EvalPreprocessing(size int, o PreprocessOverrides, data *Datasets) (augment.EvalConfig, error) {
	p := defaultPreprocessing
	switch {
	case c.Eval != nil:
		p = *c.Eval
	case c.Config != nil:
		p = runPreprocessing(c.Config.Aug)
	}
	p, err := o.apply(p, size)
	if err != nil {
		return augment.EvalConfig{}, err
	}
	if err := p.Check(); err != nil {
		return augment.EvalConfig{}, fmt.Errorf("evaluation preprocessing: %w", err)
	}
	mean, std := c.Mean, c.Std
	if len(mean) == 0 {
		if data == nil {
			cfg := DefaultConfig()
			if c.Config != nil {
				cfg = *c.Config
			}
			if data, err = OpenDatasets(cfg.Data); err != nil {
				return augment.EvalConfig{}, err
			}
		}
		mean, std = data.Mean, data.Std
	}
	return augment.EvalConfig{Size: size, CropPct: p.CropPct, Interp: p.Interpolation, Mean: mean, Std: std}, nil
}

// apply returns p with o's overrides, for a model of size × size inputs.
func (o PreprocessOverrides) apply(p checkpoint.Preprocessing, size int) (checkpoint.Preprocessing, error) {
	switch {
	case o.CropPct == 0:
	case !(o.CropPct > 0 && o.CropPct <= 1):
		return p, fmt.Errorf("--crop-pct %g: want a fraction in (0, 1]", o.CropPct)
	case size <= augment.SmallInput:
		return p, fmt.Errorf("--crop-pct %g: the model takes %d px inputs, which evaluation resizes whole (DeiT's rule for inputs of at most %d px); a crop fraction has no effect", o.CropPct, size, augment.SmallInput)
	default:
		p.CropPct = o.CropPct
	}
	if o.Interpolation != "" {
		interp, err := augment.ParseInterp(o.Interpolation)
		if err != nil {
			return p, fmt.Errorf("--interpolation: %w", err)
		}
		if interp == augment.RandomInterp {
			return p, fmt.Errorf("--interpolation random: evaluation resizes with one filter, bilinear or bicubic")
		}
		p.Interpolation = interp
	}
	return p, nil
}

// EvalPipeline is the pipeline of the checkpoint's evaluation
// preprocessing (EvalPreprocessing, with o's overrides and the data of the
// checkpoint's run configuration) for a network of input size × size.
func (c *Checkpoint) EvalPipeline(size int, o PreprocessOverrides) (augment.Pipeline, error) {
	ec, err := c.EvalPreprocessing(size, o, nil)
	if err != nil {
		return augment.Pipeline{}, err
	}
	return augment.EvalPipeline(ec)
}
