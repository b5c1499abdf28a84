package train

import (
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// TestEvalPreprocessingResolves checks the order the resolver takes the
// crop fraction and filter in: the overrides, the checkpoint's record, its
// run configuration (checkpoints from before the record), timm's defaults;
// and the mean and std: the checkpoint's, else the data's.
func TestEvalPreprocessingResolves(t *testing.T) {
	mean, std := []float32{0.1, 0.2, 0.3}, []float32{0.4, 0.5, 0.6}
	run := DefaultConfig()
	run.Aug.CropPct = 0.95
	recorded := &checkpoint.Preprocessing{CropPct: 0.8, Interpolation: augment.Bilinear}
	data := &Datasets{Mean: []float32{0.7}, Std: []float32{0.9}}
	for _, c := range []struct {
		name   string
		ck     *Checkpoint
		o      PreprocessOverrides
		crop   float64
		interp augment.Interp
		mean   []float32
	}{
		{"recorded", &Checkpoint{File: checkpoint.File{Mean: mean, Std: std, Eval: recorded}, Config: &run}, PreprocessOverrides{}, 0.8, augment.Bilinear, mean},
		{"run configuration", &Checkpoint{File: checkpoint.File{Mean: mean, Std: std}, Config: &run}, PreprocessOverrides{}, 0.95, augment.Bicubic, mean},
		{"timm's defaults", &Checkpoint{File: checkpoint.File{Mean: mean, Std: std}}, PreprocessOverrides{}, 0.875, augment.Bicubic, mean},
		{"overridden", &Checkpoint{File: checkpoint.File{Mean: mean, Std: std, Eval: recorded}}, PreprocessOverrides{CropPct: 1, Interpolation: "bicubic"}, 1, augment.Bicubic, mean},
		{"filter overridden", &Checkpoint{File: checkpoint.File{Mean: mean, Std: std}}, PreprocessOverrides{Interpolation: "bilinear"}, 0.875, augment.Bilinear, mean},
		{"data's normalisation", &Checkpoint{File: checkpoint.File{Eval: recorded}}, PreprocessOverrides{}, 0.8, augment.Bilinear, data.Mean},
	} {
		got, err := c.ck.EvalPreprocessing(64, c.o, data)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.Size != 64 || got.CropPct != c.crop || got.Interp != c.interp || !slices.Equal(got.Mean, c.mean) {
			t.Errorf("%s: %+v, want crop %g, %s, mean %v", c.name, got, c.crop, c.interp, c.mean)
		}
	}
	ck := &Checkpoint{File: checkpoint.File{Mean: mean, Std: std}}
	for _, c := range []struct {
		size int
		o    PreprocessOverrides
		want string
	}{
		{64, PreprocessOverrides{CropPct: 1.5}, "--crop-pct 1.5: want a fraction in (0, 1]"},
		{64, PreprocessOverrides{CropPct: -0.5}, "--crop-pct -0.5"},
		{28, PreprocessOverrides{CropPct: 0.9}, "28 px inputs, which evaluation resizes whole"},
		{64, PreprocessOverrides{Interpolation: "nearest"}, `--interpolation: augment: unknown interpolation "nearest"`},
		{64, PreprocessOverrides{Interpolation: "random"}, "--interpolation random: evaluation resizes with one filter"},
	} {
		if _, err := ck.EvalPreprocessing(c.size, c.o, data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v at %d px: %v, want an error containing %q", c.o, c.size, err, c.want)
		}
	}
}
