package optim

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestWeightDecayGroupsFollowTimm(t *testing.T) {
	params := vitBParams()
	groups := WeightDecayGroups(params, 0.05, DefaultNoDecayNames)
	if len(groups) != 2 || groups[0].Name != "no_decay" || groups[1].Name != "decay" {
		t.Fatalf("groups %v, want no_decay then decay", groups)
	}
	if groups[0].WeightDecay != 0 || groups[1].WeightDecay != 0.05 || groups[0].LRScale != 1 || groups[1].LRScale != 1 {
		t.Fatalf("group settings %+v %+v", groups[0], groups[1])
	}
	var decayed []string
	for _, i := range groups[1].Params {
		decayed = append(decayed, params[i].Name)
	}
	want := []string{"patch_embed.proj.weight"}
	for k := range 12 {
		for _, w := range []string{"attn.qkv.weight", "attn.proj.weight", "mlp.fc1.weight", "mlp.fc2.weight"} {
			want = append(want, fmt.Sprintf("blocks.%d.%s", k, w))
		}
	}
	want = append(want, "head.weight")
	if !slices.Equal(decayed, want) {
		t.Fatalf("decayed params:\n%v\nwant\n%v", decayed, want)
	}
	if len(groups[0].Params)+len(groups[1].Params) != len(params) {
		t.Fatal("groups do not cover all params")
	}
}

func TestNoDecayGroupGetsNoDecay(t *testing.T) {
	// With zero gradients AdamW's update is only the decay p ← (1−lr·wd)p.
	params := []Param{
		{Name: "cls_token", Shape: []int{1, 1, 2}, Data: []float32{1, 2}},
		{Name: "pos_embed", Shape: []int{1, 2, 1}, Data: []float32{3, 4}},
		{Name: "fc.weight", Shape: []int{1, 2}, Data: []float32{5, 6}},
		{Name: "fc.bias", Shape: []int{2}, Data: []float32{7, 8}},
		{Name: "odd.bias", Shape: []int{1, 2}, Data: []float32{9, 10}},
	}
	o, err := NewAdamW(params, WeightDecayGroups(params, 0.5, DefaultNoDecayNames), DefaultAdamWConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Step(0.1, randomZeroGrads(params)); err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{1, 2}, {3, 4}, {5 * 0.95, 6 * 0.95}, {7, 8}, {9, 10}}
	for i, p := range params {
		assertClose(t, p.Name, p.Data, want[i], 1e-7)
	}
}

func randomZeroGrads(params []Param) [][]float32 {
	out := make([][]float32, len(params))
	for i, p := range params {
		out[i] = make([]float32, len(p.Data))
	}
	return out
}

func TestLayerDecayScalesDepth2(t *testing.T) {
	names := []string{"cls_token", "dist_token", "pos_embed", "patch_embed.proj.weight", "patch_embed.proj.bias",
		"blocks.0.attn.qkv.weight", "blocks.0.norm1.weight", "blocks.1.mlp.fc2.weight",
		"norm.weight", "fc_norm.weight", "head.weight", "head_dist.bias"}
	params := make([]Param, len(names))
	for i, n := range names {
		shape := []int{2, 2}
		if strings.HasSuffix(n, "norm1.weight") || strings.HasSuffix(n, ".bias") || strings.HasPrefix(n, "norm") || strings.HasPrefix(n, "fc_norm") {
			shape = []int{4}
		}
		params[i] = Param{Name: n, Shape: shape, Data: make([]float32, 4)}
	}
	// decay 0.5, depth 2.
	for _, tc := range []struct {
		name   string
		layers LayerMap
		want   map[string]float64
	}{
		// num_layers 3: stem 0.5³, block0 0.5², block1 0.5, rest 1.
		{"ViTLayerMap", ViTLayerMap(2), map[string]float64{
			"cls_token": 0.125, "dist_token": 0.125, "pos_embed": 0.125, "patch_embed.proj.weight": 0.125, "patch_embed.proj.bias": 0.125,
			"blocks.0.attn.qkv.weight": 0.25, "blocks.0.norm1.weight": 0.25, "blocks.1.mlp.fc2.weight": 0.5,
			"norm.weight": 1, "fc_norm.weight": 1, "head.weight": 1, "head_dist.bias": 1}},
		// timm's group_matcher: norm is its own layer below the head.
		{"TimmViTLayerMap", TimmViTLayerMap(2), map[string]float64{
			"cls_token": 0.0625, "dist_token": 0.0625, "pos_embed": 0.0625, "patch_embed.proj.weight": 0.0625, "patch_embed.proj.bias": 0.0625,
			"blocks.0.attn.qkv.weight": 0.125, "blocks.0.norm1.weight": 0.125, "blocks.1.mlp.fc2.weight": 0.25,
			"norm.weight": 0.5, "fc_norm.weight": 1, "head.weight": 1, "head_dist.bias": 1}},
	} {
		groups, err := LayerDecayGroups(params, 0.05, DefaultNoDecayNames, 0.5, tc.layers)
		if err != nil {
			t.Fatal(err)
		}
		hp, err := resolveGroups(params, groups, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range params {
			wantWD := 0.05
			if len(p.Shape) == 1 || slices.Contains(DefaultNoDecayNames, p.Name) {
				wantWD = 0
			}
			if math.Abs(hp[i].lrScale-tc.want[p.Name]) > 1e-15 || hp[i].weightDecay != wantWD {
				t.Errorf("%s: %s: lr scale %g wd %g, want %g and %g", tc.name, p.Name, hp[i].lrScale, hp[i].weightDecay, tc.want[p.Name], wantWD)
			}
		}
		if groups[0].Name != "layer_0_no_decay" || groups[1].Name != "layer_0_decay" {
			t.Errorf("%s: first groups %q %q", tc.name, groups[0].Name, groups[1].Name)
		}
	}
}

func TestLayerDecayRejectsBadBlockIndex(t *testing.T) {
	for _, name := range []string{"blocks.2.attn.qkv.weight", "blocks.x.mlp", "blocks.-1.a"} {
		params := []Param{{Name: name, Shape: []int{1}, Data: []float32{0}}}
		_, err := LayerDecayGroups(params, 0.05, nil, 0.75, ViTLayerMap(2))
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming the param", name, err)
		}
	}
	params := []Param{{Name: "w", Shape: []int{1}, Data: []float32{0}}}
	if _, err := LayerDecayGroups(params, 0.05, nil, 0, ViTLayerMap(2)); err == nil {
		t.Error("layer decay 0 accepted")
	}
}

func TestResolveGroupsRejectsBadCover(t *testing.T) {
	params := []Param{{Name: "a", Shape: []int{1}, Data: []float32{0}}, {Name: "b", Shape: []int{1}, Data: []float32{0}}}
	for name, groups := range map[string][]Group{
		"missing":      {{Name: "g", LRScale: 1, Params: []int{0}}},
		"twice":        {{Name: "g", LRScale: 1, Params: []int{0, 1}}, {Name: "h", LRScale: 1, Params: []int{1}}},
		"out of range": {{Name: "g", LRScale: 1, Params: []int{0, 1, 2}}},
		"negative wd":  {{Name: "g", WeightDecay: -1, LRScale: 1, Params: []int{0, 1}}},
	} {
		if _, err := NewAdamW(params, groups, DefaultAdamWConfig()); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
