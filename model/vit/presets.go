package vit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vit-train/vit-train/model"
)

// vit returns a timm-default ViT configuration (qkv bias, LayerNorm eps 1e-6,
// 224 px RGB, 1000 classes, MLP ratio 4).
func vit(name string, patch, dim, depth, heads int) Config {
	return Config{Name: name, ImageSize: 224, PatchSize: patch, Channels: 3, NumClasses: 1000,
		EmbedDim: dim, Depth: depth, Heads: heads, MLPDim: 4 * dim, LayerNormEps: 1e-6, QKVBias: true}
}

func distilled(c Config, name string) Config {
	c.Name = name
	c.Distilled = true
	return c
}

// presets maps timm's model names, and vit-train's CPU-sized ones, to configurations.
var presets = func() map[string]Config {
	m := map[string]Config{}
	add := func(c Config) { m[c.Name] = c }
	add(vit("vit_tiny_patch16_224", 16, 192, 12, 3))
	add(vit("vit_small_patch16_224", 16, 384, 12, 6))
	add(vit("vit_base_patch16_224", 16, 768, 12, 12))
	add(vit("vit_base_patch32_224", 32, 768, 12, 12))
	add(vit("vit_large_patch16_224", 16, 1024, 24, 16))
	add(vit("vit_large_patch32_224", 32, 1024, 24, 16))
	add(vit("vit_huge_patch14_224", 14, 1280, 32, 16))
	for _, d := range []struct {
		size       string
		dim, heads int
	}{{"tiny", 192, 3}, {"small", 384, 6}, {"base", 768, 12}} {
		c := vit("deit_"+d.size+"_patch16_224", 16, d.dim, 12, d.heads)
		add(c)
		add(distilled(c, "deit_"+d.size+"_distilled_patch16_224"))
	}
	for _, base := range []string{"vit_tiny_patch16_224", "vit_small_patch16_224", "vit_base_patch16_224"} {
		add(distilled(m[base], strings.Replace(base, "_patch", "_distilled_patch", 1)))
	}

	// CPU-sized models. vit_cifar_patch4_32 is the benchmark configuration
	// (dim 192, depth 6, 3 heads, MLP 768 on 32×32 RGB); vit_fmnist_patch4_28
	// is the default model for the embedded Fashion-MNIST subset.
	cifar := Config{Name: "vit_cifar_patch4_32", ImageSize: 32, PatchSize: 4, Channels: 3, NumClasses: 10,
		EmbedDim: 192, Depth: 6, Heads: 3, MLPDim: 768, LayerNormEps: 1e-6, QKVBias: true}
	add(cifar)
	add(distilled(cifar, "deit_cifar_distilled_patch4_32"))
	fmnist := Config{Name: "vit_fmnist_patch4_28", ImageSize: 28, PatchSize: 4, Channels: 1, NumClasses: 10,
		EmbedDim: 64, Depth: 4, Heads: 4, MLPDim: 128, LayerNormEps: 1e-6, QKVBias: true}
	add(fmnist)
	add(distilled(fmnist, "deit_fmnist_distilled_patch4_28"))
	return m
}()

// Presets lists the preset names in sorted order.
func Presets() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Preset returns the named configuration with o applied (Config.With),
// validated.
func Preset(name string, o model.Overrides) (Config, error) {
	c, ok := presets[name]
	if !ok {
		return Config{}, fmt.Errorf("unknown model %q (known: %s)", name, strings.Join(Presets(), ", "))
	}
	return c.With(o)
}
