package interop

import (
	"errors"
	"fmt"

	"github.com/vit-train/vit-train/model/vit"
)

// DefaultLayerNormEps is timm's ViT LayerNorm epsilon, used unless a preset
// or the hints say otherwise.
const DefaultLayerNormEps = 1e-6

// Hints supplies what a checkpoint's tensor shapes do not tell.
type Hints struct {
	// Preset, when set, is the architecture the file should hold: its
	// embed dim, depth, patch size, channels, MLP dim, qkv bias and
	// distillation must match the file's. Its heads, LayerNorm epsilon and
	// name are used unless set below; its image size and class count are
	// not (the file's grid and head decide them).
	Preset *vit.Config
	// Name is the model name to record; default the preset's, else "imported".
	Name string
	// Heads is the number of attention heads. A timm file does not record
	// it, so it is needed unless Preset is set; a Google .npz file does,
	// and Heads (or the preset's) must then agree with it.
	Heads int
	// ImageSize is the input size. 0 keeps the size that pos_embed's grid
	// implies; another multiple of the patch size resamples pos_embed
	// (bicubic, antialiased, as timm's resample_abs_pos_embed).
	ImageSize int
	// LayerNormEps is the LayerNorm epsilon; 0 means the preset's, else
	// DefaultLayerNormEps.
	LayerNormEps float64
}

// resolve completes the architecture arch inferred from a file (every
// shape field set, Heads set only when the file records it) with h, and
// validates it. The image size stays the file's; see Hints.ImageSize.
func (h Hints) resolve(arch vit.Config) (vit.Config, error) {
	c := arch
	c.Name, c.LayerNormEps = "imported", DefaultLayerNormEps
	var errs []error
	if p := h.Preset; p != nil {
		mismatch := func(field string, file, preset any) {
			if file != preset {
				errs = append(errs, fmt.Errorf("the file has %s %v, preset %s has %v", field, file, p.Name, preset))
			}
		}
		mismatch("embed_dim", arch.EmbedDim, p.EmbedDim)
		mismatch("depth", arch.Depth, p.Depth)
		mismatch("patch_size", arch.PatchSize, p.PatchSize)
		mismatch("in_chans", arch.Channels, p.Channels)
		mismatch("mlp_dim", arch.MLPDim, p.MLPDim)
		mismatch("qkv_bias", arch.QKVBias, p.QKVBias)
		mismatch("distilled", arch.Distilled, p.Distilled)
		if arch.Heads == 0 || h.Heads != 0 {
			c.Heads = p.Heads
		} else {
			mismatch("num_heads", arch.Heads, p.Heads)
		}
		c.Name, c.LayerNormEps = p.Name, p.LayerNormEps
		c.DropRate, c.AttnDropRate, c.DropPathRate = p.DropRate, p.AttnDropRate, p.DropPathRate
	}
	if h.Heads != 0 {
		if arch.Heads != 0 && arch.Heads != h.Heads {
			errs = append(errs, fmt.Errorf("the file has %d attention heads, not %d", arch.Heads, h.Heads))
		}
		c.Heads = h.Heads
	}
	if c.Heads == 0 {
		errs = append(errs, fmt.Errorf("the number of attention heads cannot be inferred from the shapes (embed_dim %d): give it, or a preset", arch.EmbedDim))
	}
	if h.Name != "" {
		c.Name = h.Name
	}
	if h.LayerNormEps != 0 {
		c.LayerNormEps = h.LayerNormEps
	}
	if len(errs) > 0 {
		return vit.Config{}, errors.Join(errs...)
	}
	return c, c.Validate()
}
