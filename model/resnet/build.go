package resnet

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
)

// Build wires the network into g for the input x (B, C, H, W) and returns
// the logits (B, NumClasses).
//
// Parameter nodes are named after the parameters and hold the Model's own
// tensors, so a training graph and an eval graph built from one Model share
// their weights. In training mode the batch norms normalise with batch
// statistics and every forward run updates the running statistics; in eval
// mode they use the running statistics. Building twice into one graph
// reuses the parameter nodes already there.
func (m *Model) Build(g *gorgonia.ExprGraph, x *gorgonia.Node, training bool) (*gorgonia.Node, error) {
	if err := m.checkInput(x); err != nil {
		return nil, err
	}
	b := builder{m: m, g: g, training: training}
	h, err := b.unit(x, m.plan.stem, true)
	if err != nil {
		return nil, err
	}
	if m.plan.maxPool {
		if h, err = ops.MaxPool2d(h, MaxPoolKernel, MaxPoolStride, MaxPoolPad); err != nil {
			return nil, fmt.Errorf("resnet: maxpool: %w", err)
		}
	}
	for _, blk := range m.plan.blocks {
		if h, err = b.block(h, blk); err != nil {
			return nil, err
		}
	}
	pooled, err := ops.GlobalAvgPool(h)
	if err != nil {
		return nil, fmt.Errorf("resnet: avgpool: %w", err)
	}
	w, err := b.param("fc.weight")
	if err != nil {
		return nil, err
	}
	bias, err := b.param("fc.bias")
	if err != nil {
		return nil, err
	}
	logits, err := ops.LinearAs(m.cfg.Products, pooled, w, bias)
	if err != nil {
		return nil, fmt.Errorf("resnet: fc: %w", err)
	}
	return logits, nil
}

func (m *Model) checkInput(x *gorgonia.Node) error {
	s := x.Shape()
	if len(s) != 4 {
		return fmt.Errorf("resnet: input %v must be (B, C, H, W)", s)
	}
	if s[1] != m.cfg.Channels {
		return fmt.Errorf("resnet: input %v has %d channels, the model takes %d", s, s[1], m.cfg.Channels)
	}
	if n := m.cfg.ImageSize; n > 0 && (s[2] != n || s[3] != n) {
		return fmt.Errorf("resnet: input %v is not %d×%d", s, n, n)
	}
	if x.Dtype() != m.dtype() {
		return fmt.Errorf("resnet: input dtype %v, the model's is %v", x.Dtype(), m.dtype())
	}
	return nil
}

// ParamNodes returns the nodes of g that hold the model's parameters, in
// Params order, for gorgonia.Grad. Build must have been called on g.
func (m *Model) ParamNodes(g *gorgonia.ExprGraph) ([]*gorgonia.Node, error) {
	nodes := make([]*gorgonia.Node, len(m.params))
	for i, p := range m.params {
		n, err := findParam(g, p)
		if err != nil {
			return nil, err
		}
		if n == nil {
			return nil, fmt.Errorf("resnet: graph has no node %q; call Build first", p.Name)
		}
		nodes[i] = n
	}
	return nodes, nil
}

// findParam returns g's node for p, nil if there is none, or an error when
// a node of that name holds another tensor.
func findParam(g *gorgonia.ExprGraph, p Param) (*gorgonia.Node, error) {
	for _, n := range g.ByName(p.Name) {
		if v, ok := n.Value().(*tensor.Dense); ok && v == p.Value {
			return n, nil
		}
		return nil, fmt.Errorf("resnet: graph already has a node %q that is not this model's parameter", p.Name)
	}
	return nil, nil
}

// builder adds one Build's nodes to a graph.
type builder struct {
	m        *Model
	g        *gorgonia.ExprGraph
	training bool
}

// param returns the node of the named parameter, creating it if needed.
func (b builder) param(name string) (*gorgonia.Node, error) {
	for _, p := range b.m.params {
		if p.Name != name {
			continue
		}
		n, err := findParam(b.g, p)
		if n != nil || err != nil {
			return n, err
		}
		return gorgonia.NewTensor(b.g, b.m.dtype(), len(p.Shape), gorgonia.WithShape(p.Shape...),
			gorgonia.WithName(p.Name), gorgonia.WithValue(p.Value)), nil
	}
	return nil, fmt.Errorf("resnet: no parameter %q", name)
}

// unit applies conv → batch norm (→ ReLU).
func (b builder) unit(x *gorgonia.Node, u convBN, relu bool) (*gorgonia.Node, error) {
	w, err := b.param(u.conv + ".weight")
	if err != nil {
		return nil, err
	}
	h, err := ops.Conv2dAs(b.m.cfg.Products, x, w, nil, u.stride, u.pad)
	if err != nil {
		return nil, fmt.Errorf("resnet: %s: %w", u.conv, err)
	}
	gamma, err := b.param(u.bn + ".weight")
	if err != nil {
		return nil, err
	}
	beta, err := b.param(u.bn + ".bias")
	if err != nil {
		return nil, err
	}
	if h, err = ops.BatchNorm2d(h, gamma, beta, b.m.bns[u.bn], b.training); err != nil {
		return nil, fmt.Errorf("resnet: %s: %w", u.bn, err)
	}
	if !relu {
		return h, nil
	}
	return ops.ReLU(h)
}

// block applies relu(main(x) + shortcut(x)), main being the block's units
// with ReLU after all but the last.
func (b builder) block(x *gorgonia.Node, blk block) (*gorgonia.Node, error) {
	h := x
	for i, u := range blk.units {
		var err error
		if h, err = b.unit(h, u, i < len(blk.units)-1); err != nil {
			return nil, err
		}
	}
	shortcut := x
	if blk.down != nil {
		var err error
		if shortcut, err = b.unit(x, *blk.down, false); err != nil {
			return nil, err
		}
	}
	sum, err := ops.Add(h, shortcut)
	if err != nil {
		return nil, fmt.Errorf("resnet: residual after %s: %w", blk.units[0].conv, err)
	}
	return ops.ReLU(sum)
}
