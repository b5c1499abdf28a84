package model_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/resnet"
	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/optim"
)

// groupSettings returns each parameter's (weight decay, learning-rate
// scale) from the groups that cover it.
func groupSettings(t *testing.T, n int, groups []optim.Group) (wd, lrScale []float64) {
	t.Helper()
	wd, lrScale = make([]float64, n), make([]float64, n)
	seen := make([]bool, n)
	for _, g := range groups {
		for _, i := range g.Params {
			if seen[i] {
				t.Fatalf("param %d is in two groups", i)
			}
			seen[i] = true
			wd[i], lrScale[i] = g.WeightDecay, g.LRScale
		}
	}
	for i, s := range seen {
		if !s {
			t.Fatalf("param %d is in no group", i)
		}
	}
	return wd, lrScale
}

func TestLayerDecayScalesDepth2(t *testing.T) {
	names := []string{"cls_token", "dist_token", "pos_embed", "patch_embed.proj.weight", "patch_embed.proj.bias",
		"blocks.0.attn.qkv.weight", "blocks.0.norm1.weight", "blocks.1.mlp.fc2.weight",
		"norm.weight", "fc_norm.weight", "head.weight", "head_dist.bias"}
	params := make([]optim.Param, len(names))
	for i, n := range names {
		shape := []int{2, 2}
		if strings.HasSuffix(n, "norm1.weight") || strings.HasSuffix(n, ".bias") || strings.HasPrefix(n, "norm") || strings.HasPrefix(n, "fc_norm") {
			shape = []int{4}
		}
		params[i] = optim.Param{Name: n, Shape: shape, Data: make([]float32, 4)}
	}
	// decay 0.5, depth 2.
	for _, tc := range []struct {
		name   string
		layers optim.LayerMap
		want   map[string]float64
	}{
		// num_layers 3: stem 0.5³, block0 0.5², block1 0.5, rest 1.
		{"ViTLayerMap", ViTLayerMap(2), map[string]float64{
			"cls_token": 0.125, "dist_token": 0.125, "pos_embed": 0.125, "patch_embed.proj.weight": 0.125, "patch_embed.proj.bias": 0.125,
			"blocks.0.attn.qkv.weight": 0.25, "blocks.0.norm1.weight": 0.25, "blocks.1.mlp.fc2.weight": 0.5,
			"norm.weight": 1, "fc_norm.weight": 1, "head.weight": 1, "head_dist.bias": 1}},
		// timm's group_matcher: norm is its own layer below the head.
		{"Config.LayerMap", vit.Config{Depth: 2}.LayerMap(), map[string]float64{
			"cls_token": 0.0625, "dist_token": 0.0625, "pos_embed": 0.0625, "patch_embed.proj.weight": 0.0625, "patch_embed.proj.bias": 0.0625,
			"blocks.0.attn.qkv.weight": 0.125, "blocks.0.norm1.weight": 0.125, "blocks.1.mlp.fc2.weight": 0.25,
			"norm.weight": 0.5, "fc_norm.weight": 1, "head.weight": 1, "head_dist.bias": 1}},
	} {
		groups, err := optim.LayerDecayGroups(params, 0.05, vit.Config{}.NoWeightDecay(), 0.5, tc.layers)
		if err != nil {
			t.Fatal(err)
		}
		wd, lrScale := groupSettings(t, len(params), groups)
		for i, p := range params {
			wantWD := 0.05
			if len(p.Shape) == 1 || slices.Contains(vit.Config{}.NoWeightDecay(), p.Name) {
				wantWD = 0
			}
			if math.Abs(lrScale[i]-tc.want[p.Name]) > 1e-15 || wd[i] != wantWD {
				t.Errorf("%s: %s: lr scale %g wd %g, want %g and %g", tc.name, p.Name, lrScale[i], wd[i], tc.want[p.Name], wantWD)
			}
		}
		if groups[0].Name != "layer_0_no_decay" || groups[1].Name != "layer_0_decay" {
			t.Errorf("%s: first groups %q %q", tc.name, groups[0].Name, groups[1].Name)
		}
	}
}

func TestLayerDecayRejectsBadBlockIndex(t *testing.T) {
	for _, name := range []string{"blocks.2.attn.qkv.weight", "blocks.x.mlp", "blocks.-1.a"} {
		params := []optim.Param{{Name: name, Shape: []int{1}, Data: []float32{0}}}
		_, err := optim.LayerDecayGroups(params, 0.05, nil, 0.75, ViTLayerMap(2))
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming the param", name, err)
		}
	}
	params := []optim.Param{{Name: "w", Shape: []int{1}, Data: []float32{0}}}
	if _, err := optim.LayerDecayGroups(params, 0.05, nil, 0, ViTLayerMap(2)); err == nil {
		t.Error("layer decay 0 accepted")
	}
}

// TestResNetGroupsByStage checks a ResNet's layer map (stem 0, layer<k>
// k, fc last) and that only its convolution and fc weights decay.
func TestResNetGroupsByStage(t *testing.T) {
	spec := resnet.Config{Arch: "resnet20", Channels: 1, ImageSize: 8, NumClasses: 3}
	net, err := model.New(model.SpecOf(spec), 0)
	if err != nil {
		t.Fatal(err)
	}
	params := net.Params()
	groups, err := optim.LayerDecayGroups(params, 0.05, spec.NoWeightDecay(), 0.5, spec.LayerMap())
	if err != nil {
		t.Fatal(err)
	}
	wd, lrScale := groupSettings(t, len(params), groups)
	want := map[string]float64{"conv1.weight": 0.0625, "bn1.bias": 0.0625, "layer1.0.conv1.weight": 0.125,
		"layer2.0.downsample.0.weight": 0.25, "layer3.2.bn2.weight": 0.5, "fc.weight": 1, "fc.bias": 1}
	seen := 0
	for i, p := range params {
		wantWD := 0.05
		if len(p.Shape) == 1 {
			wantWD = 0
		}
		if wd[i] != wantWD {
			t.Errorf("%s: weight decay %g, want %g", p.Name, wd[i], wantWD)
		}
		if s, ok := want[p.Name]; ok {
			seen++
			if math.Abs(lrScale[i]-s) > 1e-15 {
				t.Errorf("%s: lr scale %g, want %g", p.Name, lrScale[i], s)
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("found %d of the %d named parameters", seen, len(want))
	}
	if !spec.IsHead("fc.weight") || spec.IsHead("layer3.2.bn2.weight") {
		t.Error("fc is the head, nothing else")
	}
}

// ViTLayerMap is the ViT layer assignment of the BEiT and MAE fine-tuning
// code (num_layers = depth+1): cls_token, dist_token, pos_embed and
// patch_embed.* are layer 0, blocks.k.* is layer k+1, everything else
// (norm, fc_norm, head, head_dist) is layer depth+1. It differs from
// timm's (vit.Config.LayerMap) only for the final norm, which the test
// compares against.
func ViTLayerMap(depth int) optim.LayerMap {
	timm := vit.Config{Depth: depth}.LayerMap()
	return optim.LayerMap{MaxLayer: depth + 1, ID: func(name string) (int, error) {
		id, err := timm.ID(name)
		return min(id, depth+1), err
	}}
}
