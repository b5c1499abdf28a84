package main

import (
	"github.com/spf13/cobra"

	"github.com/vit-train/vit-train/train"
)

// addPreprocessFlags adds the overrides of a checkpoint's evaluation
// preprocessing, timm's --crop-pct and --interpolation, to cmd.
func addPreprocessFlags(cmd *cobra.Command, o *train.PreprocessOverrides) {
	cmd.Flags().Float64Var(&o.CropPct, "crop-pct", 0, "crop fraction: resize the shorter side to size/crop-pct, then crop the centre (default: the checkpoint's)")
	cmd.Flags().StringVar(&o.Interpolation, "interpolation", "", "resize filter: bilinear or bicubic (default: the checkpoint's)")
}
