package vit

import (
	"strings"
	"testing"

	"github.com/vit-train/vit-train/model"
)

func TestPresetParamCountsMatchTimm(t *testing.T) {
	want := map[string]int{
		"vit_base_patch16_224":             86567656,
		"vit_large_patch16_224":            304326632,
		"vit_huge_patch14_224":             632045800,
		"deit_base_distilled_patch16_224":  87338192,
		"vit_tiny_patch16_224":             5717416,
		"vit_small_patch16_224":            22050664,
		"vit_base_patch32_224":             88224232,
		"vit_large_patch32_224":            306535400,
		"deit_tiny_patch16_224":            5717416,
		"deit_small_patch16_224":           22050664,
		"deit_base_patch16_224":            86567656,
		"deit_tiny_distilled_patch16_224":  5910800,
		"deit_small_distilled_patch16_224": 22436432,
	}
	for name, n := range want {
		c, err := Preset(name, model.Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.ParamCount(); got != n {
			t.Errorf("%s: %d parameters, timm has %d", name, got, n)
		}
	}
	// Every preset validates and counts its parameters from its specs.
	for _, name := range Presets() {
		c, err := Preset(name, model.Overrides{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if c.ParamCount() <= 0 {
			t.Errorf("%s: no parameters", name)
		}
	}
}

func TestMACsOfViTB16(t *testing.T) {
	c, _ := Preset("vit_base_patch16_224", model.Overrides{})
	// timm/fvcore report 17.6 GMACs ("17.6 GFLOPs") for ViT-B/16 at 224.
	if g := float64(c.MACs()) / 1e9; g < 17.5 || g > 17.6 {
		t.Fatalf("ViT-B/16 forward: %.3f GMACs, want ≈17.57", g)
	}
}

// TestGraphFLOPs checks each graph's count of the arithmetic it runs:
// the whole model's in a float32 training graph; in an evaluation graph,
// whose last block computes the [CLS] rows only, the multiply-adds of
// ViT-B/16's 197-token qkv product, a 1-row × 197-token q·kᵀ and P·v,
// and 1-row projection and MLP less, counted by hand.
func TestGraphFLOPs(t *testing.T) {
	c, _ := Preset("vit_base_patch16_224", model.Overrides{})
	const d, m, tokens = 768, 3072, 197
	block := int64(tokens*d*3*d + 2*tokens*tokens*d + tokens*d*d + 2*tokens*d*m)
	last := int64(tokens*d*3*d + 2*1*tokens*d + 1*d*d + 2*1*d*m)
	if got, want := c.macsWithLastRows(1), c.MACs()-block+last; got != want {
		t.Fatalf("ViT-B/16 with one row in its last block: %d MACs, want %d", got, want)
	}
	small, err := New(tiny(true), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, training := range []bool{true, false} {
		g, err := small.BuildGraph(2, training, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := small.Config.ForwardFLOPs()
		if !training {
			want = 2 * small.Config.macsWithLastRows(2)
		}
		if g.FLOPs != want || want >= small.Config.ForwardFLOPs() && !training {
			t.Fatalf("training=%v: graph FLOPs %d, want %d (the whole model's %d)", training, g.FLOPs, want, small.Config.ForwardFLOPs())
		}
	}
}

func TestPresetOverrides(t *testing.T) {
	c, err := Preset("vit_base_patch16_224", model.Overrides{ImageSize: 384, NumClasses: 10})
	if err != nil {
		t.Fatal(err)
	}
	if c.NumPatches() != 576 || c.NumTokens() != 577 || c.NumClasses != 10 {
		t.Fatalf("got %d patches, %d tokens, %d classes", c.NumPatches(), c.NumTokens(), c.NumClasses)
	}
	if _, err := Preset("vit_base_patch16_224", model.Overrides{ImageSize: 100}); err == nil || !strings.Contains(err.Error(), "patch_size 16 does not divide img_size 100") {
		t.Fatalf("want an indivisible-size error, got %v", err)
	}
	if _, err := Preset("nope", model.Overrides{}); err == nil || !strings.Contains(err.Error(), `unknown model "nope"`) {
		t.Fatalf("want unknown-model error, got %v", err)
	}
}

func TestValidateNamesFieldAndValue(t *testing.T) {
	c, _ := Preset("vit_fmnist_patch4_28", model.Overrides{})
	for _, tc := range []struct {
		mut  func(*Config)
		want string
	}{
		{func(c *Config) { c.Heads = 3 }, "num_heads 3 does not divide embed_dim 64"},
		{func(c *Config) { c.DropPathRate = 1 }, "drop_path_rate must be in [0, 1), got 1"},
		{func(c *Config) { c.Depth = 0 }, "depth must be positive, got 0"},
		{func(c *Config) { c.AttnDropRate = -0.1 }, "attn_drop_rate must be in [0, 1), got -0.1"},
	} {
		bad := c
		tc.mut(&bad)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want %q, got %v", tc.want, err)
		}
	}
}

func TestParamSpecNamesAndLayouts(t *testing.T) {
	c, _ := Preset("deit_fmnist_distilled_patch4_28", model.Overrides{})
	shapes := map[string][]int{}
	for _, s := range c.ParamSpecs() {
		shapes[s.Name] = s.Shape
	}
	check := func(name string, want ...int) {
		got := shapes[name]
		if len(got) != len(want) {
			t.Errorf("%s: shape %v, want %v", name, got, want)
			return
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: shape %v, want %v", name, got, want)
				return
			}
		}
	}
	check("patch_embed.proj.weight", 64, 1, 4, 4)
	check("pos_embed", 1, 51, 64)
	check("dist_token", 1, 1, 64)
	check("blocks.3.attn.qkv.weight", 192, 64)
	check("blocks.0.mlp.fc1.weight", 128, 64)
	check("head_dist.weight", 10, 64)
}
