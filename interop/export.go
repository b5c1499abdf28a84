package interop

import (
	"fmt"

	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model/vit"
)

// TimmStateDict checks that params are exactly cfg's parameters (the names
// and shapes of cfg.ParamSpecs, which are timm's) and returns them in that
// order as F32 tensors sharing params' data: a state dict that timm's
// VisionTransformer (or VisionTransformerDistilled) of the same
// configuration loads with strict=True.
func TimmStateDict(cfg vit.Config, params []safetensors.Tensor) ([]safetensors.Tensor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return matchSpecs(cfg, params)
}

// WriteTimm writes TimmStateDict(cfg, params) to path as safetensors, with
// metadata {"format": "pt"} as PyTorch's safetensors.torch.save_file writes,
// atomically (see safetensors.WriteFileAtomic).
func WriteTimm(path string, cfg vit.Config, params []safetensors.Tensor) error {
	sd, err := TimmStateDict(cfg, params)
	if err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	return safetensors.WriteFileAtomic(path, sd, map[string]string{"format": "pt"})
}
