package vit

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/optim"
)

// Architecture is the architecture's registered name: a Spec's Arch and a
// checkpoint's "vit_train.arch".
const Architecture = "vit"

func init() {
	model.Register(model.Architecture{
		Name:      Architecture,
		ConfigKey: "vit_train.model",
		Presets:   Presets,
		Preset: func(name string, o model.Overrides) (model.Config, bool, error) {
			if _, ok := presets[name]; !ok {
				return nil, false, nil
			}
			c, err := Preset(name, o)
			return c, true, err
		},
		Decode: func(data []byte) (model.Config, error) {
			var c Config
			err := json.Unmarshal(data, &c)
			return c, err
		},
	})
}

// With returns c with overrides applied: input size, class count,
// channels and shape when set, a distillation token and head when
// o.Distilled, and the dropout and drop-path rates always, as for a
// preset; validated.
func (c Config) With(o model.Overrides) (Config, error) {
	if err := o.CheckNotNegative(model.Shape); err != nil {
		return Config{}, fmt.Errorf("model %s: %w", c.Name, err)
	}
	ratio := float64(c.MLPDim) / float64(c.EmbedDim)
	if o.MLPRatio != 0 {
		ratio = o.MLPRatio
	}
	c.PatchSize = model.Keep(o.PatchSize, c.PatchSize)
	c.EmbedDim = model.Keep(o.EmbedDim, c.EmbedDim)
	c.Depth = model.Keep(o.Depth, c.Depth)
	c.Heads = model.Keep(o.Heads, c.Heads)
	if o.EmbedDim != 0 || o.MLPRatio != 0 {
		c.MLPDim = int(float64(c.EmbedDim) * ratio)
	}
	c.ImageSize = model.Keep(o.ImageSize, c.ImageSize)
	c.NumClasses = model.Keep(o.NumClasses, c.NumClasses)
	c.Channels = model.Keep(o.Channels, c.Channels)
	c.DropRate, c.AttnDropRate, c.DropPathRate = o.DropRate, o.AttnDropRate, o.DropPathRate
	c.Distilled = c.Distilled || o.Distilled
	return c, c.Validate()
}

// Override is With as a model.Config.
func (c Config) Override(o model.Overrides) (model.Config, error) { return c.With(o) }

// Summary gives the patch, width, depth, heads, MLP and tokens.
func (c Config) Summary() string {
	kind := "ViT"
	if c.Distilled {
		kind = "DeiT, distilled"
	}
	return fmt.Sprintf("%s: patch %d, dim %d, depth %d, %d heads, MLP %d, %d tokens (%d patches + %d prefix)",
		kind, c.PatchSize, c.EmbedDim, c.Depth, c.Heads, c.MLPDim, c.NumTokens(), c.NumPatches(), c.NumPrefixTokens())
}

// Architecture is "vit".
func (c Config) Architecture() string { return Architecture }

// ModelName is the configured name.
func (c Config) ModelName() string { return c.Name }

// InputShape is (Channels, ImageSize).
func (c Config) InputShape() (channels, size int) { return c.Channels, c.ImageSize }

// Classes is NumClasses.
func (c Config) Classes() int { return c.NumClasses }

// WithInput keeps the patch size: the pos_embed is resampled when weights
// are loaded.
func (c Config) WithInput(size, classes int) model.Config {
	c.ImageSize = model.Keep(size, c.ImageSize)
	c.NumClasses = model.Keep(classes, c.NumClasses)
	return c
}

// Resolve returns c: a ViT's input is always set.
func (c Config) Resolve(channels, size, classes int) model.Config { return c }

// Build builds the ViT, initialised from seed.
func (c Config) Build(seed uint64) (model.Network, error) {
	m, err := New(c, seed)
	if err != nil {
		return nil, err
	}
	return network{m}, nil
}

// CheckTensors checks the configuration against the parameter tensors.
func (c Config) CheckTensors(params []safetensors.Tensor) error {
	if err := c.Validate(); err != nil {
		return err
	}
	// Each block has a dozen tensors: bound the depth before laying out
	// the blocks' specs.
	if c.Depth > len(params) {
		return fmt.Errorf("depth %d, but the file holds only %d parameter tensors", c.Depth, len(params))
	}
	specs := c.ParamSpecs()
	want := make([]model.NamedShape, len(specs))
	for i, s := range specs {
		want[i] = model.NamedShape{Name: s.Name, Shape: s.Shape}
	}
	return model.MatchTensors(want, params, "model "+c.Name)
}

// noDecay are the parameters timm's VisionTransformer returns from
// no_weight_decay(), plus DeiT's dist_token.
var noDecay = []string{"pos_embed", "cls_token", "dist_token"}

// NoWeightDecay is timm's no_weight_decay() plus dist_token.
func (c Config) NoWeightDecay() []string { return slices.Clone(noDecay) }

// LayerMap is the assignment timm's param_groups_layer_decay derives from
// VisionTransformer.group_matcher: cls_token, dist_token, pos_embed and
// patch_embed.* are layer 0, blocks.k.* is layer k+1, names starting with
// "norm" are layer depth+1, and the rest (fc_norm, head, head_dist) are
// layer depth+2 with scale 1.
func (c Config) LayerMap() optim.LayerMap {
	depth := c.Depth
	return optim.LayerMap{MaxLayer: depth + 2, ID: func(name string) (int, error) {
		if isStem(name) {
			return 0, nil
		}
		if k, ok, err := blockOf(name, depth); ok || err != nil {
			return k + 1, err
		}
		if strings.HasPrefix(name, "norm") {
			return depth + 1, nil
		}
		return depth + 2, nil
	}}
}

// isStem reports whether name belongs to the embedding layers (timm's
// stem matcher ^cls_token|pos_embed|patch_embed, plus dist_token).
func isStem(name string) bool {
	for _, p := range []string{"cls_token", "dist_token", "pos_embed", "patch_embed"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// blockOf returns k for names "blocks.<k>.…", ok=false for other names,
// and an error for a malformed or out-of-range block index.
func blockOf(name string, depth int) (k int, ok bool, err error) {
	rest, found := strings.CutPrefix(name, "blocks.")
	if !found {
		return 0, false, nil
	}
	idx, _, _ := strings.Cut(rest, ".")
	k, err = strconv.Atoi(idx)
	if err != nil || k < 0 || k >= depth {
		return 0, false, fmt.Errorf("optim: param %q: block index %q is not in [0, %d)", name, idx, depth)
	}
	return k, true, nil
}

// IsHead reports whether name belongs to head or head_dist.
func (c Config) IsHead(name string) bool {
	return strings.HasPrefix(name, "head.") || strings.HasPrefix(name, "head_dist.")
}

// Convert resamples a pos_embed of another ViT's patch grid to c's.
func (c Config) Convert(t safetensors.Tensor, from model.Config) ([]float32, string, bool, error) {
	src, isViT := from.(Config)
	if t.Name != "pos_embed" || !isViT {
		return nil, "", false, nil
	}
	data, note, err := ResamplePosEmbedTensor(t, src, c)
	return data, note, true, err
}

// PyTorchLoad names timm's VisionTransformer (or
// VisionTransformerDistilled) of the same configuration.
func (c Config) PyTorchLoad(path string) string {
	kind := "VisionTransformer"
	if c.Distilled {
		kind = "VisionTransformerDistilled"
	}
	return fmt.Sprintf("timm: %s(img_size=%d, patch_size=%d, in_chans=%d, num_classes=%d, embed_dim=%d, depth=%d, num_heads=%d, mlp_ratio=%g, qkv_bias=%s)"+
		".load_state_dict(safetensors.torch.load_file(%q))",
		kind, c.ImageSize, c.PatchSize, c.Channels, c.NumClasses, c.EmbedDim, c.Depth, c.Heads,
		float64(c.MLPDim)/float64(c.EmbedDim), pyBool(c.QKVBias), path)
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// ResamplePosEmbedTensor resamples a checkpoint's pos_embed (1, T, D),
// made for a ViT of configuration from, to the patch grid of configuration
// to (bicubic, antialiased, prefix tokens kept), returning the new values
// (1, T', D) and a note saying what it did.
func ResamplePosEmbedTensor(t safetensors.Tensor, from, to Config) ([]float32, string, error) {
	if len(t.Shape) != 3 || t.Shape[0] != 1 || t.Shape[2] != to.EmbedDim {
		return nil, "", fmt.Errorf("checkpoint tensor \"pos_embed\" has shape %v, want (1, T, %d)", t.Shape, to.EmbedDim)
	}
	if from.NumPrefixTokens() != to.NumPrefixTokens() {
		return nil, "", fmt.Errorf("checkpoint pos_embed has %d prefix tokens, model %s has %d", from.NumPrefixTokens(), to.Name, to.NumPrefixTokens())
	}
	oldG, newG := from.GridSize(), to.GridSize()
	if from.NumTokens() != t.Shape[1] {
		return nil, "", fmt.Errorf("checkpoint pos_embed has %d tokens but its config says %d", t.Shape[1], from.NumTokens())
	}
	data, err := ResamplePosEmbed(t.Data, to.EmbedDim, to.NumPrefixTokens(), oldG, oldG, newG, newG, Bicubic)
	if err != nil {
		return nil, "", err
	}
	return data, fmt.Sprintf("resampled pos_embed from a %d×%d to a %d×%d patch grid (bicubic, antialiased)", oldG, oldG, newG, newG), nil
}

// network is a ViT or DeiT as a model.Network.
type network struct{ m *ViT }

func (n network) Spec() model.Spec { return model.SpecOf(n.m.Config) }

func (n network) Describe() string {
	c := n.m.Config
	return fmt.Sprintf("model %s: %.2fM parameters, %d tokens", c.Name, float64(c.ParamCount())/1e6, c.NumTokens())
}

func (n network) Params() []optim.Param {
	ps := make([]optim.Param, len(n.m.Params))
	for i, p := range n.m.Params {
		ps[i] = optim.Param{Name: p.Name, Shape: p.Value.Shape().Clone(), Data: p.Float32s()}
	}
	return ps
}

func (n network) Tensors() []safetensors.Tensor { return n.m.Tensors() }

func (n network) Graph(batch int, training bool, rng *ops.Randomness) (*nn.Graph, error) {
	return n.m.BuildGraph(batch, training, rng)
}

func (n network) SetPrecision(v blas.Variant) { n.m.Products = v }

func (n network) SharingWeights(weights [][]float32) (model.Network, error) {
	m, err := n.m.SharingWeights(weights)
	if err != nil {
		return nil, err
	}
	m.Products = n.m.Products
	return network{m}, nil
}

// Distillable is true: DeiT's objective trains a ViT, on its distillation
// head when it has one.
func (c Config) Distillable() bool { return true }
