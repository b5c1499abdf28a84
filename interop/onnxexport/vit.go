package onnxexport

import (
	"fmt"
	"math"

	"github.com/vit-train/vit-train/formats/onnx"
	"github.com/vit-train/vit-train/model/vit"
)

// vit wires model/vit's evaluation graph (BuildGraph with training
// false): no dropout or drop-path.
func (b *builder) vit(c vit.Config, bothHeads bool) error {
	if err := c.Validate(); err != nil {
		return err
	}
	x := b.input(c.Channels, c.ImageSize)
	x = b.patchEmbed(x, c)
	x = b.embedTokens(x, c)
	for i := range c.Depth {
		x = b.block(x, fmt.Sprintf("blocks.%d.", i), c)
	}
	x = b.layerNorm(x, "norm", c.LayerNormEps)
	cls := b.gemm(b.token(x, 0, "cls"), "head")
	if !c.Distilled {
		b.node("Identity", Logits, []string{cls})
		b.output(Logits, c.NumClasses)
		return nil
	}
	dist := b.gemm(b.token(x, 1, "dist"), "head_dist")
	sum := b.node("Add", "heads_sum", []string{cls, dist})
	b.node("Mul", Logits, []string{sum, b.floats("half", nil, 0.5)})
	b.output(Logits, c.NumClasses)
	if bothHeads {
		b.node("Identity", ClsLogits, []string{cls})
		b.node("Identity", DistLogits, []string{dist})
		b.output(ClsLogits, c.NumClasses)
		b.output(DistLogits, c.NumClasses)
	}
	return nil
}

// patchEmbed is timm's PatchEmbed: a P×P convolution of stride P, then
// the grid flattened to tokens: (B, C, H, W) → (B, N, D).
func (b *builder) patchEmbed(x string, c vit.Config) string {
	p := int64(c.PatchSize)
	x = b.node("Conv", "patch_embed.proj", []string{x, b.param("patch_embed.proj.weight"), b.param("patch_embed.proj.bias")},
		onnx.IntsAttr("kernel_shape", p, p), onnx.IntsAttr("strides", p, p))
	x = b.node("Reshape", "patch_embed.flatten", []string{x, b.ints("shape_b_d_n", []int64{3}, 0, int64(c.EmbedDim), -1)})
	return b.node("Transpose", "patch_embed", []string{x}, onnx.IntsAttr("perm", 0, 2, 1))
}

// embedTokens puts the [CLS] token (and the distillation token) in front
// of the patch tokens and adds pos_embed: (B, N, D) → (B, T, D).
func (b *builder) embedTokens(patches string, c vit.Config) string {
	batch := b.node("Shape", "batch_size", []string{Input}, onnx.IntAttr("start", 0), onnx.IntAttr("end", 1))
	shape := b.node("Concat", "prefix_shape", []string{batch, b.ints("ones_2", []int64{2}, 1, 1)}, onnx.IntAttr("axis", 0))
	tokens := []string{b.node("Expand", "cls_tokens", []string{b.param("cls_token"), shape})}
	if c.Distilled {
		tokens = append(tokens, b.node("Expand", "dist_tokens", []string{b.param("dist_token"), shape}))
	}
	x := b.node("Concat", "tokens", append(tokens, patches), onnx.IntAttr("axis", 1))
	return b.node("Add", "embed", []string{x, b.param("pos_embed")})
}

// token picks token i of every sequence: (B, T, D) → (B, D).
func (b *builder) token(x string, i int64, name string) string {
	return b.node("Gather", name, []string{x, b.ints(fmt.Sprintf("index_%d", i), nil, i)}, onnx.IntAttr("axis", 1))
}

// block is a pre-LN encoder block:
//
//	x = x + proj(attn(qkv(norm1(x))))
//	x = x + fc2(gelu(fc1(norm2(x))))
func (b *builder) block(x, prefix string, c vit.Config) string {
	h := b.layerNorm(x, prefix+"norm1", c.LayerNormEps)
	h = b.linear(h, prefix+"attn.qkv", c.QKVBias)
	h = b.attention(h, prefix+"attn.", c)
	h = b.linear(h, prefix+"attn.proj", true)
	x = b.node("Add", prefix+"residual1", []string{x, h})
	h = b.layerNorm(x, prefix+"norm2", c.LayerNormEps)
	h = b.linear(h, prefix+"mlp.fc1", true)
	h = b.gelu(h, prefix+"mlp.gelu")
	h = b.linear(h, prefix+"mlp.fc2", true)
	return b.node("Add", prefix+"residual2", []string{x, h})
}

func (b *builder) layerNorm(x, layer string, eps float64) string {
	return b.node("LayerNormalization", layer, []string{x, b.param(layer + ".weight"), b.param(layer + ".bias")},
		onnx.IntAttr("axis", -1), onnx.FloatAttr("epsilon", float32(eps)))
}

// linear is nn.Linear on (B, T, in): x·Wᵀ (+ b), W (out, in) transposed
// by a Transpose node.
func (b *builder) linear(x, layer string, bias bool) string {
	wt := b.node("Transpose", layer+".weight_t", []string{b.param(layer + ".weight")}, onnx.IntsAttr("perm", 1, 0))
	y := b.node("MatMul", layer+".matmul", []string{x, wt})
	if !bias {
		return y
	}
	return b.node("Add", layer, []string{y, b.param(layer + ".bias")})
}

// attention is ops.Attention: qkv (B, T, 3D) read as (B, T, 3, H, D/H),
// softmax(q·kᵀ/√(D/H))·v per head, heads merged: (B, T, D).
func (b *builder) attention(qkv, prefix string, c vit.Config) string {
	h, dh := int64(c.Heads), int64(c.HeadDim())
	x := b.node("Reshape", prefix+"qkv_heads", []string{qkv, b.ints(fmt.Sprintf("shape_b_t_3_%d_%d", h, dh), []int64{5}, 0, 0, 3, h, dh)})
	x = b.node("Transpose", prefix+"qkv_split", []string{x}, onnx.IntsAttr("perm", 2, 0, 3, 1, 4)) // (3, B, H, T, dh)
	q := b.node("Gather", prefix+"q", []string{x, b.ints("index_0", nil, 0)}, onnx.IntAttr("axis", 0))
	k := b.node("Gather", prefix+"k", []string{x, b.ints("index_1", nil, 1)}, onnx.IntAttr("axis", 0))
	v := b.node("Gather", prefix+"v", []string{x, b.ints("index_2", nil, 2)}, onnx.IntAttr("axis", 0))
	kt := b.node("Transpose", prefix+"k_t", []string{k}, onnx.IntsAttr("perm", 0, 1, 3, 2))
	s := b.node("MatMul", prefix+"scores", []string{q, kt})
	scale := float32(1 / math.Sqrt(float64(dh)))
	s = b.node("Mul", prefix+"scores_scaled", []string{s, b.floats(fmt.Sprintf("attn_scale_%d", dh), nil, scale)})
	p := b.node("Softmax", prefix+"probs", []string{s}, onnx.IntAttr("axis", -1))
	o := b.node("MatMul", prefix+"heads", []string{p, v})                                     // (B, H, T, dh)
	o = b.node("Transpose", prefix+"heads_t", []string{o}, onnx.IntsAttr("perm", 0, 2, 1, 3)) // (B, T, H, dh)
	return b.node("Reshape", prefix+"merged", []string{o, b.ints(fmt.Sprintf("shape_b_t_%d", c.EmbedDim), []int64{3}, 0, 0, int64(c.EmbedDim))})
}

// gelu is the exact GELU, x·Φ(x) = x · (1 + erf(x/√2)) / 2 (opset 17 has
// no Gelu op).
func (b *builder) gelu(x, name string) string {
	e := b.node("Mul", name+".scaled", []string{x, b.floats("inv_sqrt2", nil, float32(1/math.Sqrt2))})
	e = b.node("Erf", name+".erf", []string{e})
	e = b.node("Add", name+".one_plus", []string{e, b.floats("one", nil, 1)})
	e = b.node("Mul", name+".x", []string{x, e})
	return b.node("Mul", name, []string{e, b.floats("half", nil, 0.5)})
}
