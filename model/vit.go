package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/optim"
)

// vitNetwork is a ViT or DeiT as a Network.
type vitNetwork struct{ m *vit.ViT }

// FromViT returns m as a Network.
func FromViT(m *vit.ViT) Network { return vitNetwork{m} }

// ViTOf returns the ViT a network is, or an error naming the network when
// it is another architecture: for what only a transformer has (attention
// maps, position embeddings).
func ViTOf(n Network) (*vit.ViT, error) {
	if v, ok := n.(vitNetwork); ok {
		return v.m, nil
	}
	return nil, fmt.Errorf("model %s is a %s, not a ViT", n.Name(), n.Spec().Arch)
}

func (n vitNetwork) Name() string { return n.m.Config.Name }

func (n vitNetwork) Spec() Spec { return ViTSpec(n.m.Config) }

func (n vitNetwork) Input() (int, int) { return n.m.Config.Channels, n.m.Config.ImageSize }

func (n vitNetwork) NumClasses() int { return n.m.Config.NumClasses }

func (n vitNetwork) Describe() string {
	c := n.m.Config
	return fmt.Sprintf("model %s: %.2fM parameters, %d tokens", c.Name, float64(c.ParamCount())/1e6, c.NumTokens())
}

func (n vitNetwork) Params() []optim.Param {
	ps := make([]optim.Param, len(n.m.Params))
	for i, p := range n.m.Params {
		ps[i] = optim.Param{Name: p.Name, Shape: p.Value.Shape().Clone(), Data: p.Float32s()}
	}
	return ps
}

func (n vitNetwork) Tensors() []safetensors.Tensor { return n.m.Tensors() }

func (n vitNetwork) Graph(batch int, training bool, rng *ops.Randomness) (*nn.Graph, error) {
	return n.m.BuildGraph(batch, training, rng)
}

func (n vitNetwork) SetPrecision(v blas.Variant) { n.m.Products = v }

// vitNoDecay are the parameters timm's VisionTransformer returns from
// no_weight_decay(), plus DeiT's dist_token.
var vitNoDecay = []string{"pos_embed", "cls_token", "dist_token"}

func (n vitNetwork) NoWeightDecay() []string { return slices.Clone(vitNoDecay) }

func (n vitNetwork) LayerMap() optim.LayerMap { return TimmViTLayerMap(n.m.Config.Depth) }

func (n vitNetwork) IsHead(name string) bool {
	return strings.HasPrefix(name, "head.") || strings.HasPrefix(name, "head_dist.")
}

func (n vitNetwork) PyTorchLoad(path string) string {
	c := n.m.Config
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

func (n vitNetwork) SharingWeights(weights [][]float32) (Network, error) {
	m, err := n.m.SharingWeights(weights)
	if err != nil {
		return nil, err
	}
	m.Products = n.m.Products
	return vitNetwork{m}, nil
}

func (n vitNetwork) targets() []target {
	out := make([]target, len(n.m.Params))
	for i, p := range n.m.Params {
		out[i] = target{name: p.Name, shape: p.Value.Shape(), set: func(data []float32) error { return setViTParam(p, data) }}
	}
	return out
}

// setViTParam copies data into p, a float32 or float64 parameter of the
// same size.
func setViTParam(p *vit.Param, data []float32) error {
	switch dst := p.Value.Data().(type) {
	case []float32:
		if len(dst) == len(data) {
			copy(dst, data)
			return nil
		}
	case []float64:
		if len(dst) == len(data) {
			for i, v := range data {
				dst[i] = float64(v)
			}
			return nil
		}
	default:
		return fmt.Errorf("parameter %q is %v; checkpoints load into float32 or float64 models", p.Name, p.Value.Dtype())
	}
	return fmt.Errorf("checkpoint tensor %q has %d values, the model's parameter %d", p.Name, len(data), p.Value.Shape().TotalSize())
}

// adapt resamples a pos_embed of another patch grid to the model's.
func (n vitNetwork) adapt(t safetensors.Tensor, from Spec) ([]float32, string, bool, error) {
	if t.Name != "pos_embed" || from.Arch != ArchViT {
		return nil, "", false, nil
	}
	data, note, err := ResamplePosEmbed(t, from.ViT, n.m.Config)
	return data, note, true, err
}

// ResamplePosEmbed resamples a checkpoint's pos_embed (1, T, D), made for
// a ViT of configuration from, to the patch grid of configuration to
// (bicubic, antialiased, prefix tokens kept), returning the new values
// (1, T', D) and a note saying what it did.
func ResamplePosEmbed(t safetensors.Tensor, from, to vit.Config) ([]float32, string, error) {
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
	data, err := vit.ResamplePosEmbed(t.Data, to.EmbedDim, to.NumPrefixTokens(), oldG, oldG, newG, newG, vit.Bicubic)
	if err != nil {
		return nil, "", err
	}
	return data, fmt.Sprintf("resampled pos_embed from a %d×%d to a %d×%d patch grid (bicubic, antialiased)", oldG, oldG, newG, newG), nil
}

// vitStem reports whether name belongs to the embedding layers (timm's
// stem matcher ^cls_token|pos_embed|patch_embed, plus dist_token).
func vitStem(name string) bool {
	for _, p := range []string{"cls_token", "dist_token", "pos_embed", "patch_embed"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// vitBlock returns k for names "blocks.<k>.…", ok=false for other names, and
// an error for a malformed or out-of-range block index.
func vitBlock(name string, depth int) (k int, ok bool, err error) {
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

// ViTLayerMap is the ViT layer assignment of the BEiT and MAE fine-tuning
// code (num_layers = depth+1): cls_token, dist_token, pos_embed and
// patch_embed.* are layer 0, blocks.k.* is layer k+1, everything else
// (norm, fc_norm, head, head_dist) is layer depth+1, so the scale is
// decay^(depth+1−id): 1 for the head, decay^(depth+1) for the embeddings.
func ViTLayerMap(depth int) optim.LayerMap {
	return optim.LayerMap{MaxLayer: depth + 1, ID: func(name string) (int, error) {
		if vitStem(name) {
			return 0, nil
		}
		if k, ok, err := vitBlock(name, depth); ok || err != nil {
			return k + 1, err
		}
		return depth + 1, nil
	}}
}

// TimmViTLayerMap is the assignment timm's param_groups_layer_decay derives
// from VisionTransformer.group_matcher: as ViTLayerMap, except that names
// starting with "norm" form their own layer depth+1 and the remaining
// parameters (fc_norm, head, head_dist) are layer depth+2 with scale 1.
func TimmViTLayerMap(depth int) optim.LayerMap {
	return optim.LayerMap{MaxLayer: depth + 2, ID: func(name string) (int, error) {
		if vitStem(name) {
			return 0, nil
		}
		if k, ok, err := vitBlock(name, depth); ok || err != nil {
			return k + 1, err
		}
		if strings.HasPrefix(name, "norm") {
			return depth + 1, nil
		}
		return depth + 2, nil
	}}
}
