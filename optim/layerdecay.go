package optim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// LayerMap assigns each parameter name a layer id in [0, MaxLayer] for
// layer-wise learning-rate decay: a parameter of layer id gets LRScale
// decay^(MaxLayer − id).
type LayerMap struct {
	MaxLayer int
	ID       func(name string) (int, error)
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
func ViTLayerMap(depth int) LayerMap {
	return LayerMap{MaxLayer: depth + 1, ID: func(name string) (int, error) {
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
func TimmViTLayerMap(depth int) LayerMap {
	return LayerMap{MaxLayer: depth + 2, ID: func(name string) (int, error) {
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

// LayerDecayGroups builds timm's layer-decay parameter groups
// "layer_<id>_decay" and "layer_<id>_no_decay" (in order of first use):
// weight decay as in WeightDecayGroups, LRScale = layerDecay^(MaxLayer − id).
func LayerDecayGroups(params []Param, weightDecay float64, noDecay []string, layerDecay float64, layers LayerMap) ([]Group, error) {
	if !(layerDecay > 0) {
		return nil, fmt.Errorf("optim: layer decay %g must be > 0", layerDecay)
	}
	var groups []Group
	index := map[string]int{}
	for i, p := range params {
		id, err := layers.ID(p.Name)
		if err != nil {
			return nil, err
		}
		if id < 0 || id > layers.MaxLayer {
			return nil, fmt.Errorf("optim: param %q: layer id %d is not in [0, %d]", p.Name, id, layers.MaxLayer)
		}
		name, wd := fmt.Sprintf("layer_%d_no_decay", id), 0.0
		if decays(p, noDecay) {
			name, wd = fmt.Sprintf("layer_%d_decay", id), weightDecay
		}
		gi, ok := index[name]
		if !ok {
			gi = len(groups)
			index[name] = gi
			groups = append(groups, Group{Name: name, WeightDecay: wd, LRScale: math.Pow(layerDecay, float64(layers.MaxLayer-id))})
		}
		groups[gi].Params = append(groups[gi].Params, i)
	}
	return groups, nil
}
