package model

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/model/ops"
	"github.com/vit-train/vit-train/model/runner"
)

// Graph is the ViT forward pass for a fixed batch size, built on a Gorgonia
// expression graph whose parameter nodes share the model's tensors. A
// training graph (Training true) applies dropout and drop-path; an evaluation
// graph does not, and may have another batch size.
//
// Another network (a CNN teacher such as model/resnet) can use Run,
// Predictions, Input and Differentiate by filling G, Batch, Training,
// Images, ImageData, Logits and ParamNodes, leaving Model nil.
type Graph struct {
	Model    *ViT // nil for a graph built outside this package
	Training bool
	Batch    int
	G        *gorgonia.ExprGraph

	// Images is the input (B, C, H, W); write pixels into ImageData.
	Images    *gorgonia.Node
	ImageData any // []float32 or []float64 backing Images
	// Logits is the class head on [CLS], (B, classes).
	Logits *gorgonia.Node
	// DistLogits is the distillation head on the dist token, (B, classes); nil unless distilled.
	DistLogits *gorgonia.Node
	// ParamNodes are the parameter nodes, aligned with Model.Params.
	ParamNodes []*gorgonia.Node
	// Attention holds each block's attention op; their Probs are the
	// attention maps of the last run.
	Attention []*ops.Attention
	// Blocks holds, for each encoder block, the op nodes it adds to the
	// graph and its output: what gradient checkpointing recomputes.
	Blocks []runner.Segment
	// GradCheckpointing makes Differentiate keep only each block's input
	// between the forward and the backward pass and recompute the block's
	// activations in the backward pass (timm's set_grad_checkpointing):
	// less memory for about one more forward pass of compute.
	GradCheckpointing bool

	forward *runner.Program
}

// BuildGraph builds the forward graph for batch images. rng supplies the
// dropout and drop-path masks of a training graph; it may be nil for an
// evaluation graph or when every rate is zero.
func (m *ViT) BuildGraph(batch int, training bool, rng *ops.Randomness) (*Graph, error) {
	c := m.Config
	if batch < 1 {
		return nil, fmt.Errorf("model: batch size must be positive, got %d", batch)
	}
	stochastic := training && (c.DropRate > 0 || c.AttnDropRate > 0 || c.DropPathRate > 0)
	if stochastic && rng == nil {
		return nil, fmt.Errorf("model: a training graph with dropout or drop-path needs an ops.Randomness")
	}
	g := gorgonia.NewGraph()
	gr := &Graph{Model: m, Training: training, Batch: batch, G: g}
	p := map[string]*gorgonia.Node{}
	for _, prm := range m.Params {
		n := gorgonia.NewTensor(g, m.Dtype, prm.Value.Dims(), gorgonia.WithShape(prm.Value.Shape()...),
			gorgonia.WithName(prm.Name), gorgonia.WithValue(prm.Value))
		gr.ParamNodes = append(gr.ParamNodes, n)
		p[prm.Name] = n
	}
	imgShape := tensor.Shape{batch, c.Channels, c.ImageSize, c.ImageSize}
	img := tensor.New(tensor.Of(m.Dtype), tensor.WithShape(imgShape...))
	gr.ImageData = img.Data()
	gr.Images = gorgonia.NewTensor(g, m.Dtype, 4, gorgonia.WithShape(imgShape...), gorgonia.WithName("images"), gorgonia.WithValue(img))

	b := builder{g: gr, p: p, training: training, rng: rng}
	x := b.do(ops.Patchify(gr.Images, c.PatchSize))
	x = b.do(ops.Linear(x, p["patch_embed.proj.weight"], p["patch_embed.proj.bias"]))
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
		first := nextNodeID(g)
		x = b.block(x, fmt.Sprintf("blocks.%d.", i), dpr)
		gr.Blocks = append(gr.Blocks, runner.Segment{Nodes: nodesFrom(g, first, x), Output: x})
	}
	x = b.layerNorm(x, "norm")
	cls := b.do(ops.SelectToken(x, 0))
	cls = b.dropout(cls, c.DropRate) // timm's head_drop
	gr.Logits = b.do(ops.Linear(cls, p["head.weight"], p["head.bias"]))
	if c.Distilled {
		dist := b.do(ops.SelectToken(x, 1))
		dist = b.dropout(dist, c.DropRate)
		gr.DistLogits = b.do(ops.Linear(dist, p["head_dist.weight"], p["head_dist.bias"]))
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
	g        *Graph
	p        map[string]*gorgonia.Node
	training bool
	rng      *ops.Randomness
	err      error
}

func (b *builder) do(n *gorgonia.Node, err error) *gorgonia.Node {
	if b.err == nil && err != nil {
		b.err = err
	}
	return n
}

func (b *builder) ok() bool { return b.err == nil }

func (b *builder) dropout(x *gorgonia.Node, rate float64) *gorgonia.Node {
	if !b.ok() || !b.training || rate == 0 {
		return x
	}
	return b.do(ops.Dropout(x, rate, b.rng))
}

func (b *builder) dropPath(x *gorgonia.Node, rate float64) *gorgonia.Node {
	if !b.ok() || !b.training || rate == 0 {
		return x
	}
	return b.do(ops.DropPath(x, rate, b.rng))
}

func (b *builder) layerNorm(x *gorgonia.Node, name string) *gorgonia.Node {
	if !b.ok() {
		return nil
	}
	return b.do(ops.LayerNorm(x, b.p[name+".weight"], b.p[name+".bias"], b.g.Model.Config.LayerNormEps))
}

func (b *builder) linear(x *gorgonia.Node, name string) *gorgonia.Node {
	if !b.ok() {
		return nil
	}
	return b.do(ops.Linear(x, b.p[name+".weight"], b.p[name+".bias"]))
}

// block is a pre-LN encoder block:
//
//	x = x + drop_path(proj_drop(proj(attn(qkv(norm1(x))))))
//	x = x + drop_path(drop(fc2(drop(gelu(fc1(norm2(x)))))))
func (b *builder) block(x *gorgonia.Node, prefix string, dpr float64) *gorgonia.Node {
	c := b.g.Model.Config
	h := b.layerNorm(x, prefix+"norm1")
	h = b.linear(h, prefix+"attn.qkv")
	if b.ok() {
		var att *ops.Attention
		h, att, b.err = ops.NewAttention(h, c.Heads, b.attnDrop(), b.rng)
		b.g.Attention = append(b.g.Attention, att)
	}
	h = b.linear(h, prefix+"attn.proj")
	h = b.dropout(h, c.DropRate)
	h = b.dropPath(h, dpr)
	if b.ok() {
		x = b.do(ops.Add(x, h))
	}
	h = b.layerNorm(x, prefix+"norm2")
	h = b.linear(h, prefix+"mlp.fc1")
	if b.ok() {
		h = b.do(ops.GELU(h))
	}
	h = b.dropout(h, c.DropRate)
	h = b.linear(h, prefix+"mlp.fc2")
	h = b.dropout(h, c.DropRate)
	h = b.dropPath(h, dpr)
	if b.ok() {
		x = b.do(ops.Add(x, h))
	}
	return x
}

func (b *builder) attnDrop() float64 {
	if !b.training {
		return 0
	}
	return b.g.Model.Config.AttnDropRate
}

// Float32Images returns ImageData, the (B, C, H, W) input, as float32
// values, or an error for a graph of another dtype (a float64 model) or
// without images.
func (gr *Graph) Float32Images() ([]float32, error) {
	switch d := gr.ImageData.(type) {
	case []float32:
		return d, nil
	case nil:
		return nil, fmt.Errorf("model: the graph has no image data")
	default:
		return nil, fmt.Errorf("model: the graph's images are %T, want []float32 (a float32 model)", d)
	}
}

// Run computes the forward pass (Logits and DistLogits) for the images in ImageData.
func (gr *Graph) Run() error {
	if gr.forward == nil {
		outs := []*gorgonia.Node{gr.Logits}
		if gr.DistLogits != nil {
			outs = append(outs, gr.DistLogits)
		}
		p, err := runner.Compile(gr.G, outs...)
		if err != nil {
			return err
		}
		gr.forward = p
	}
	return gr.forward.Run()
}

// Value returns a node's value after Run; for nodes other than the outputs
// it may already have been overwritten.
func (gr *Graph) Value(n *gorgonia.Node) gorgonia.Value {
	if gr.forward == nil {
		return nil
	}
	return gr.forward.Value(n)
}

// HeadLogits copies one head's logits (Logits or DistLogits) of the last
// Run into dst as float32, (B, classes).
func (gr *Graph) HeadLogits(head *gorgonia.Node, dst []float32) []float32 {
	dst = dst[:0]
	switch d := gr.Value(head).Data().(type) {
	case []float32:
		dst = append(dst, d...)
	case []float64:
		for _, v := range d {
			dst = append(dst, float32(v))
		}
	}
	return dst
}

// Predictions returns the model's inference logits (B, classes) after Run:
// the class head, or for a distilled model the mean of the two heads, as
// DeiT does at inference.
func (gr *Graph) Predictions(dst []float32) []float32 {
	n := gr.Batch * gr.Logits.Shape()[1]
	if cap(dst) < n {
		dst = make([]float32, n)
	}
	dst = dst[:n]
	clear(dst)
	add := func(v gorgonia.Value, w float32) {
		switch d := v.Data().(type) {
		case []float32:
			for i := range dst {
				dst[i] += w * d[i]
			}
		case []float64:
			for i := range dst {
				dst[i] += w * float32(d[i])
			}
		}
	}
	if gr.DistLogits == nil {
		add(gr.Value(gr.Logits), 1)
		return dst
	}
	add(gr.Value(gr.Logits), 0.5)
	add(gr.Value(gr.DistLogits), 0.5)
	return dst
}
