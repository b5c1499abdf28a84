package vit

import (
	"fmt"
	"math"

	"github.com/vit-train/vit-train/formats/onnx"
	"github.com/vit-train/vit-train/model"
)

// WriteONNX writes BuildGraph's evaluation graph (training false: no
// dropout or drop-path) as ONNX operators: the patch embedding, the
// [CLS] (and distillation) tokens and pos_embed, the pre-LN blocks
// (LayerNormalization, fused-qkv multi-head attention scaled by 1/√(D/H),
// exact erf GELU), the final norm and the head on [CLS]. A distilled
// model's logits are the mean of its two heads, DeiT's inference rule.
// Linear weights are transposed by Transpose nodes, which a runtime folds
// when it loads the model.
func (n network) WriteONNX(b *onnx.Builder, images string) (model.ONNXHeads, error) {
	c := n.m.Config
	if err := c.Validate(); err != nil {
		return model.ONNXHeads{}, err
	}
	x := onnxPatchEmbed(b, images, c)
	x = onnxTokens(b, x, images, c)
	for i := range c.Depth {
		x = onnxBlock(b, x, fmt.Sprintf("blocks.%d.", i), c)
	}
	x = onnxLayerNorm(b, x, "norm", c.LayerNormEps)
	cls := b.Gemm(onnxToken(b, x, 0, "cls"), "head")
	if !c.Distilled {
		return model.ONNXHeads{Logits: cls}, nil
	}
	dist := b.Gemm(onnxToken(b, x, 1, "dist"), "head_dist")
	sum := b.Node("Add", "heads_sum", []string{cls, dist})
	mean := b.Node("Mul", "heads_mean", []string{sum, b.Floats("half", nil, 0.5)})
	return model.ONNXHeads{Logits: mean, Class: cls, Distillation: dist}, nil
}

// onnxPatchEmbed is timm's PatchEmbed: a P×P convolution of stride P,
// then the grid flattened to tokens: (B, C, H, W) → (B, N, D).
func onnxPatchEmbed(b *onnx.Builder, x string, c Config) string {
	p := int64(c.PatchSize)
	x = b.Node("Conv", "patch_embed.proj", []string{x, b.Param("patch_embed.proj.weight"), b.Param("patch_embed.proj.bias")},
		onnx.IntsAttr("kernel_shape", p, p), onnx.IntsAttr("strides", p, p))
	x = b.Node("Reshape", "patch_embed.flatten", []string{x, b.Ints("shape_b_d_n", []int64{3}, 0, int64(c.EmbedDim), -1)})
	return b.Node("Transpose", "patch_embed", []string{x}, onnx.IntsAttr("perm", 0, 2, 1))
}

// onnxTokens puts the [CLS] token (and the distillation token) in front
// of the patch tokens and adds pos_embed: (B, N, D) → (B, T, D). The
// batch size is read from images.
func onnxTokens(b *onnx.Builder, patches, images string, c Config) string {
	batch := b.Node("Shape", "batch_size", []string{images}, onnx.IntAttr("start", 0), onnx.IntAttr("end", 1))
	shape := b.Node("Concat", "prefix_shape", []string{batch, b.Ints("ones_2", []int64{2}, 1, 1)}, onnx.IntAttr("axis", 0))
	tokens := []string{b.Node("Expand", "cls_tokens", []string{b.Param("cls_token"), shape})}
	if c.Distilled {
		tokens = append(tokens, b.Node("Expand", "dist_tokens", []string{b.Param("dist_token"), shape}))
	}
	x := b.Node("Concat", "tokens", append(tokens, patches), onnx.IntAttr("axis", 1))
	return b.Node("Add", "embed", []string{x, b.Param("pos_embed")})
}

// onnxToken picks token i of every sequence: (B, T, D) → (B, D).
func onnxToken(b *onnx.Builder, x string, i int64, name string) string {
	return b.Node("Gather", name, []string{x, b.Ints(fmt.Sprintf("index_%d", i), nil, i)}, onnx.IntAttr("axis", 1))
}

// onnxBlock is a pre-LN encoder block on (B, T, D):
//
//	x = x + proj(attn(qkv(norm1(x))))
//	x = x + fc2(gelu(fc1(norm2(x))))
func onnxBlock(b *onnx.Builder, x, prefix string, c Config) string {
	h := onnxLayerNorm(b, x, prefix+"norm1", c.LayerNormEps)
	h = onnxLinear(b, h, prefix+"attn.qkv", c.QKVBias)
	h = onnxAttention(b, h, prefix+"attn.", c)
	h = onnxLinear(b, h, prefix+"attn.proj", true)
	x = b.Node("Add", prefix+"residual1", []string{x, h})
	h = onnxLayerNorm(b, x, prefix+"norm2", c.LayerNormEps)
	h = onnxLinear(b, h, prefix+"mlp.fc1", true)
	h = onnxGELU(b, h, prefix+"mlp.gelu")
	h = onnxLinear(b, h, prefix+"mlp.fc2", true)
	return b.Node("Add", prefix+"residual2", []string{x, h})
}

// onnxLayerNorm normalises the last axis with the layer's weight and bias.
func onnxLayerNorm(b *onnx.Builder, x, layer string, eps float64) string {
	return b.Node("LayerNormalization", layer, []string{x, b.Param(layer + ".weight"), b.Param(layer + ".bias")},
		onnx.IntAttr("axis", -1), onnx.FloatAttr("epsilon", float32(eps)))
}

// onnxLinear is nn.Linear on (B, T, in): x·Wᵀ (+ b), W (out, in)
// transposed by a Transpose node.
func onnxLinear(b *onnx.Builder, x, layer string, bias bool) string {
	wt := b.Node("Transpose", layer+".weight_t", []string{b.Param(layer + ".weight")}, onnx.IntsAttr("perm", 1, 0))
	y := b.Node("MatMul", layer+".matmul", []string{x, wt})
	if !bias {
		return y
	}
	return b.Node("Add", layer, []string{y, b.Param(layer + ".bias")})
}

// onnxAttention is ops.Attention: qkv (B, T, 3D) read as (B, T, 3, H,
// D/H), softmax(q·kᵀ/√(D/H))·v per head, heads merged: (B, T, D).
func onnxAttention(b *onnx.Builder, qkv, prefix string, c Config) string {
	h, dh := int64(c.Heads), int64(c.HeadDim())
	x := b.Node("Reshape", prefix+"qkv_heads", []string{qkv, b.Ints(fmt.Sprintf("shape_b_t_3_%d_%d", h, dh), []int64{5}, 0, 0, 3, h, dh)})
	x = b.Node("Transpose", prefix+"qkv_split", []string{x}, onnx.IntsAttr("perm", 2, 0, 3, 1, 4)) // (3, B, H, T, dh)
	q := b.Node("Gather", prefix+"q", []string{x, b.Ints("index_0", nil, 0)}, onnx.IntAttr("axis", 0))
	k := b.Node("Gather", prefix+"k", []string{x, b.Ints("index_1", nil, 1)}, onnx.IntAttr("axis", 0))
	v := b.Node("Gather", prefix+"v", []string{x, b.Ints("index_2", nil, 2)}, onnx.IntAttr("axis", 0))
	kt := b.Node("Transpose", prefix+"k_t", []string{k}, onnx.IntsAttr("perm", 0, 1, 3, 2))
	s := b.Node("MatMul", prefix+"scores", []string{q, kt})
	scale := float32(1 / math.Sqrt(float64(dh)))
	s = b.Node("Mul", prefix+"scores_scaled", []string{s, b.Floats(fmt.Sprintf("attn_scale_%d", dh), nil, scale)})
	p := b.Node("Softmax", prefix+"probs", []string{s}, onnx.IntAttr("axis", -1))
	o := b.Node("MatMul", prefix+"heads", []string{p, v})                                     // (B, H, T, dh)
	o = b.Node("Transpose", prefix+"heads_t", []string{o}, onnx.IntsAttr("perm", 0, 2, 1, 3)) // (B, T, H, dh)
	return b.Node("Reshape", prefix+"merged", []string{o, b.Ints(fmt.Sprintf("shape_b_t_%d", c.EmbedDim), []int64{3}, 0, 0, int64(c.EmbedDim))})
}

// onnxGELU is the exact GELU, x·Φ(x) = x · (1 + erf(x/√2)) / 2 (opset 17
// has no Gelu op).
func onnxGELU(b *onnx.Builder, x, name string) string {
	e := b.Node("Mul", name+".scaled", []string{x, b.Floats("inv_sqrt2", nil, float32(1/math.Sqrt2))})
	e = b.Node("Erf", name+".erf", []string{e})
	e = b.Node("Add", name+".one_plus", []string{e, b.Floats("one", nil, 1)})
	e = b.Node("Mul", name+".x", []string{x, e})
	return b.Node("Mul", name, []string{e, b.Floats("half", nil, 0.5)})
}
