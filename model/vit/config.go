// Package vit defines the Vision Transformer of "An Image is Worth 16x16
// Words" and DeiT's distilled variant on Gorgonia: its configuration, the
// timm presets, parameters named and laid out exactly as timm's, and the
// training and evaluation graphs built from the fused ops in nn/ops.
package vit

import (
	"errors"
	"fmt"

	"github.com/vit-train/vit-train/model"
)

// Config describes a ViT. Field names follow timm's VisionTransformer arguments.
type Config struct {
	Name         string  `json:"name" yaml:"name"`
	ImageSize    int     `json:"img_size" yaml:"img_size"`
	PatchSize    int     `json:"patch_size" yaml:"patch_size"`
	Channels     int     `json:"in_chans" yaml:"in_chans"`
	NumClasses   int     `json:"num_classes" yaml:"num_classes"`
	EmbedDim     int     `json:"embed_dim" yaml:"embed_dim"`
	Depth        int     `json:"depth" yaml:"depth"`
	Heads        int     `json:"num_heads" yaml:"num_heads"`
	MLPDim       int     `json:"mlp_dim" yaml:"mlp_dim"`
	DropRate     float64 `json:"drop_rate" yaml:"drop_rate"`
	AttnDropRate float64 `json:"attn_drop_rate" yaml:"attn_drop_rate"`
	DropPathRate float64 `json:"drop_path_rate" yaml:"drop_path_rate"`
	Distilled    bool    `json:"distilled" yaml:"distilled"`
	LayerNormEps float64 `json:"norm_eps" yaml:"norm_eps"`
	QKVBias      bool    `json:"qkv_bias" yaml:"qkv_bias"`
}

// Validate reports the first impossible setting, naming the field and value.
func (c Config) Validate() error {
	var errs []error
	positive := func(field string, v int) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("model config %q: %s must be positive, got %d", c.Name, field, v))
		}
	}
	positive("img_size", c.ImageSize)
	positive("patch_size", c.PatchSize)
	positive("in_chans", c.Channels)
	positive("num_classes", c.NumClasses)
	positive("embed_dim", c.EmbedDim)
	positive("depth", c.Depth)
	positive("num_heads", c.Heads)
	positive("mlp_dim", c.MLPDim)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if c.ImageSize%c.PatchSize != 0 {
		errs = append(errs, fmt.Errorf("model config %q: patch_size %d does not divide img_size %d", c.Name, c.PatchSize, c.ImageSize))
	}
	if c.EmbedDim%c.Heads != 0 {
		errs = append(errs, fmt.Errorf("model config %q: num_heads %d does not divide embed_dim %d", c.Name, c.Heads, c.EmbedDim))
	}
	rate := func(field string, v float64) {
		if !(v >= 0 && v < 1) {
			errs = append(errs, fmt.Errorf("model config %q: %s must be in [0, 1), got %g", c.Name, field, v))
		}
	}
	rate("drop_rate", c.DropRate)
	rate("attn_drop_rate", c.AttnDropRate)
	rate("drop_path_rate", c.DropPathRate)
	if !(c.LayerNormEps > 0) {
		errs = append(errs, fmt.Errorf("model config %q: norm_eps must be positive, got %g", c.Name, c.LayerNormEps))
	}
	return errors.Join(errs...)
}

// GridSize is the number of patches along each side, ImageSize/PatchSize.
func (c Config) GridSize() int { return c.ImageSize / c.PatchSize }

// NumPatches is the number of patch tokens, GridSize².
func (c Config) NumPatches() int { return c.GridSize() * c.GridSize() }

// NumPrefixTokens is 1 ([CLS]) or 2 ([CLS] and the distillation token).
func (c Config) NumPrefixTokens() int {
	if c.Distilled {
		return 2
	}
	return 1
}

// NumTokens is the sequence length T = NumPrefixTokens + NumPatches.
func (c Config) NumTokens() int { return c.NumPrefixTokens() + c.NumPatches() }

// Tokens is the sequence the encoder works on: the prefix tokens, then
// the patches.
func (c Config) Tokens() model.Tokens {
	return model.Tokens{Count: c.NumTokens(), Prefix: c.NumPrefixTokens(), Grid: c.GridSize()}
}

// HeadDim is EmbedDim/Heads.
func (c Config) HeadDim() int { return c.EmbedDim / c.Heads }
