package vit

import (
	"cmp"
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/runner"
)

// BuildGraph builds the forward graph for batch images. rng supplies the
// dropout and drop-path masks of a training graph; it may be nil for an
// evaluation graph or when every rate is zero.
func (m *ViT) BuildGraph(batch int, training bool, rng *ops.Randomness) (*nn.Graph, error) {
	c := m.Config
	if batch < 1 {
		return nil, fmt.Errorf("model: batch size must be positive, got %d", batch)
	}
	stochastic := training && (c.DropRate > 0 || c.AttnDropRate > 0 || c.DropPathRate > 0)
	if stochastic && rng == nil {
		return nil, fmt.Errorf("model: a training graph with dropout or drop-path needs an ops.Randomness")
	}
	g := gorgonia.NewGraph()
	gr := &nn.Graph{Training: training, Batch: batch, G: g}
	p := map[string]*gorgonia.Node{}
	dt := m.dtype()
	for _, prm := range m.Params {
		n := gorgonia.NewTensor(g, dt, prm.Value.Dims(), gorgonia.WithShape(prm.Value.Shape()...),
			gorgonia.WithName(prm.Name), gorgonia.WithValue(prm.Value))
		gr.ParamNodes = append(gr.ParamNodes, n)
		p[prm.Name] = n
	}
	imgShape := tensor.Shape{batch, c.Channels, c.ImageSize, c.ImageSize}
	img := tensor.New(tensor.Of(dt), tensor.WithShape(imgShape...))
	gr.ImageData = img.Data()
	gr.Images = gorgonia.NewTensor(g, dt, 4, gorgonia.WithShape(imgShape...), gorgonia.WithName("images"), gorgonia.WithValue(img))

	b := builder{g: gr, cfg: c, p: p, training: training, rng: rng, products: m.Products}
	lastQueries := b.headTokens()
	gr.FLOPs = 2 * c.macsWithLastRows(cmp.Or(lastQueries, c.NumTokens()))
	x := b.do(ops.Patchify(gr.Images, c.PatchSize))
	x = b.do(ops.LinearAs(m.Products, x, p["patch_embed.proj.weight"], p["patch_embed.proj.bias"]))
	prefix := []*gorgonia.Node{p["cls_token"]}
	if c.Distilled {
		prefix = append(prefix, p["dist_token"])
	}
	x = b.do(ops.EmbedTokens(x, p["pos_embed"], prefix...))
	x = b.dropout(x, c.DropRate) // timm's pos_drop
	for i := 0; i < c.Depth; i++ {
		// Stochastic depth grows linearly over the blocks, timm's
		// [x.item() for x in torch.linspace(0, drop_path_rate, depth)].
		dpr := 0.0
		if c.Depth > 1 {
			dpr = c.DropPathRate * float64(i) / float64(c.Depth-1)
		}
		queries := 0
		if i == c.Depth-1 {
			queries = lastQueries
		}
		first := nextNodeID(g)
		x = b.block(x, fmt.Sprintf("blocks.%d.", i), dpr, queries)
		gr.Blocks = append(gr.Blocks, runner.Segment{Nodes: nodesFrom(g, first, x), Output: x})
	}
	x = b.layerNorm(x, "norm")
	cls := b.do(ops.SelectToken(x, 0))
	cls = b.dropout(cls, c.DropRate) // timm's head_drop
	gr.Logits = b.do(ops.LinearAs(m.Products, cls, p["head.weight"], p["head.bias"]))
	if c.Distilled {
		dist := b.do(ops.SelectToken(x, 1))
		dist = b.dropout(dist, c.DropRate)
		gr.DistLogits = b.do(ops.LinearAs(m.Products, dist, p["head_dist.weight"], p["head_dist.bias"]))
	}
	if b.err != nil {
		return nil, fmt.Errorf("model %s: building graph: %w", c.Name, b.err)
	}
	return gr, nil
}

// nextNodeID is the ID the next node added to g will get.
func nextNodeID(g *gorgonia.ExprGraph) int64 {
	var next int64
	for _, n := range g.AllNodes() {
		next = max(next, n.ID()+1)
	}
	return next
}

// nodesFrom returns g's op nodes with IDs from first on, except skip.
func nodesFrom(g *gorgonia.ExprGraph, first int64, skip *gorgonia.Node) []*gorgonia.Node {
	var ns []*gorgonia.Node
	for _, n := range g.AllNodes() {
		if n.ID() >= first && n != skip && n.Op() != nil {
			ns = append(ns, n)
		}
	}
	return ns
}

// builder wires one graph, keeping the first error.
type builder struct {
	g        *nn.Graph
	cfg      Config
	p        map[string]*gorgonia.Node
	training bool
	rng      *ops.Randomness
	products blas.Variant
	err      error
}

func (b *builder) do(n *gorgonia.Node, err error) *gorgonia.Node {
	if b.err == nil && err != nil {
		b.err = err
	}
	return n
}

func (b *builder) ok() bool { return b.err == nil }

// drops reports whether dropout or drop path at rate drops anything in
// this graph: only in training, and only at a rate above zero.
func (b *builder) drops(rate float64) bool { return b.training && rate > 0 }

func (b *builder) dropout(x *gorgonia.Node, rate float64) *gorgonia.Node {
	if !b.ok() || !b.drops(rate) {
		return x
	}
	return b.do(ops.Dropout(x, rate, b.rng))
}

func (b *builder) dropPath(x *gorgonia.Node, rate float64) *gorgonia.Node {
	if !b.ok() || !b.drops(rate) {
		return x
	}
	return b.do(ops.DropPath(x, rate, b.rng))
}

func (b *builder) layerNorm(x *gorgonia.Node, name string) *gorgonia.Node {
	if !b.ok() {
		return nil
	}
	return b.do(ops.LayerNorm(x, b.p[name+".weight"], b.p[name+".bias"], b.cfg.LayerNormEps))
}

func (b *builder) linear(x *gorgonia.Node, name string) *gorgonia.Node {
	if !b.ok() {
		return nil
	}
	return b.do(ops.LinearAs(b.products, x, b.p[name+".weight"], b.p[name+".bias"]))
}

// linearGELU is linear followed by GELU, as one op that applies GELU to
// the product as the matrix kernel stores it.
func (b *builder) linearGELU(x *gorgonia.Node, name string) *gorgonia.Node {
	if !b.ok() {
		return nil
	}
	return b.do(ops.LinearGELUAs(b.products, x, b.p[name+".weight"], b.p[name+".bias"]))
}

// block is a pre-LN encoder block:
//
//	x = x + drop_path(proj_drop(proj(attn(qkv(norm1(x))))))
//	x = x + drop_path(drop(fc2(drop(gelu(fc1(norm2(x)))))))
//
// With queries > 0 it computes the rows of the first queries tokens only:
// they attend to all of x's tokens, and the rest of the block runs on
// their rows, (B, queries, D).
func (b *builder) block(x *gorgonia.Node, prefix string, dpr float64, queries int) *gorgonia.Node {
	c := b.cfg
	h := b.layerNorm(x, prefix+"norm1")
	h = b.linear(h, prefix+"attn.qkv")
	if b.ok() {
		var att *ops.Attention
		h, att, b.err = ops.NewPrefixAttentionAs(b.products, h, c.Heads, queries, b.attnDrop(), b.rng)
		b.g.Attention = append(b.g.Attention, att)
	}
	if queries > 0 && b.ok() {
		x = b.do(ops.Tokens(x, 0, queries))
	}
	x = b.residual(x, h, prefix+"attn.proj", dpr)
	h = b.layerNorm(x, prefix+"norm2")
	h = b.linearGELU(h, prefix+"mlp.fc1")
	h = b.dropout(h, c.DropRate)
	return b.residual(x, h, prefix+"mlp.fc2", dpr)
}

// residual returns x + drop_path(drop(linear(h, name))). Where neither
// drops anything (an evaluation graph, or rates of zero), it is one op
// that adds x to the product as the matrix kernel stores it.
func (b *builder) residual(x, h *gorgonia.Node, name string, dpr float64) *gorgonia.Node {
	if !b.ok() {
		return nil
	}
	if !b.drops(b.cfg.DropRate) && !b.drops(dpr) {
		return b.do(ops.LinearResidualAs(b.products, h, b.p[name+".weight"], b.p[name+".bias"], x))
	}
	h = b.linear(h, name)
	h = b.dropout(h, b.cfg.DropRate)
	h = b.dropPath(h, dpr)
	if !b.ok() {
		return nil
	}
	return b.do(ops.Add(x, h))
}

// headTokens is how many tokens the last block computes the rows of: the
// prefix tokens, the only ones the heads read ([CLS], and DeiT's
// distillation token), or 0 for all of them. A block's rows are
// independent but for attention's keys and values, so the logits and
// gradients are those of the whole block's; only the order in which the
// weight gradients sum their terms changes. A float32 training graph
// keeps the whole block, so that float32 training keeps its values to
// the bit.
func (b *builder) headTokens() int {
	if b.training && b.products.IsFP32() {
		return 0
	}
	if b.cfg.Distilled {
		return 2
	}
	return 1
}

func (b *builder) attnDrop() float64 {
	if !b.training {
		return 0
	}
	return b.cfg.AttnDropRate
}
