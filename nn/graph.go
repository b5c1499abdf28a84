package nn

import (
	"fmt"

	"gorgonia.org/gorgonia"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/runner"
)

// Graph is a network's forward pass for a fixed batch size, built on a
// Gorgonia expression graph whose parameter nodes share the network's
// tensors. A training graph (Training true) applies dropout, drop-path and
// batch statistics; an evaluation graph does not, and may have another batch
// size. model/vit and model/resnet build them; Run, Predictions, Input and
// Differentiate work the same for every network.
type Graph struct {
	Training bool
	Batch    int
	G        *gorgonia.ExprGraph

	// Images is the input (B, C, H, W); write pixels into ImageData.
	Images    *gorgonia.Node
	ImageData any // backing Images: []float32 (Float32Images); []float64 in internal/gradcheck's graphs
	// Logits is the class head on [CLS], (B, classes).
	Logits *gorgonia.Node
	// DistLogits is the distillation head on the dist token, (B, classes); nil unless distilled.
	DistLogits *gorgonia.Node
	// ParamNodes are the parameter nodes, aligned with the network's parameters.
	ParamNodes []*gorgonia.Node
	// Attention holds each block's attention op; their Probs are the
	// attention maps of the last run.
	Attention []*ops.Attention
	// Blocks holds, for each encoder block, the op nodes it adds to the
	// graph and its output: what gradient checkpointing recomputes.
	Blocks []runner.Segment
	// FLOPs is the floating-point operations of one image's forward pass
	// as this graph runs it: 2 × the multiply-adds of its matrix products
	// and convolutions (the configuration's ForwardFLOPs, less the rows a
	// ViT's last block does not compute).
	FLOPs int64
	// GradCheckpointing makes Differentiate keep only each block's input
	// between the forward and the backward pass and recompute the block's
	// activations in the backward pass (timm's set_grad_checkpointing):
	// less memory for about one more forward pass of compute.
	GradCheckpointing bool

	forward *runner.Program
	frozen  bool
}

// Float32Images returns ImageData, the (B, C, H, W) input, as float32
// values, or an error for a graph of another dtype (a float64 model) or
// without images.
func (gr *Graph) Float32Images() ([]float32, error) {
	switch d := gr.ImageData.(type) {
	case []float32:
		return d, nil
	case nil:
		return nil, fmt.Errorf("nn: the graph has no image data")
	default:
		return nil, fmt.Errorf("nn: the graph's images are %T, want []float32 (a float32 model)", d)
	}
}

// Run computes the forward pass (Logits and DistLogits) for the images in ImageData.
func (gr *Graph) Run() error {
	p, err := gr.program()
	if err != nil {
		return err
	}
	return p.Run()
}

// TimeOps makes the graph's later runs (a training step's, once
// Differentiate has made one) time each of their ops, until StopTiming
// (see runner.Program.TimeOps).
func (gr *Graph) TimeOps() (*runner.OpTimes, error) {
	p, err := gr.program()
	if err != nil {
		return nil, err
	}
	return p.TimeOps(), nil
}

// StopTiming ends the timing that TimeOps started.
func (gr *Graph) StopTiming() {
	if gr.forward != nil {
		gr.forward.StopTiming()
	}
}

// program returns the program that Run runs, compiling the forward pass
// on the first call unless Differentiate has made it a training step.
func (gr *Graph) program() (*runner.Program, error) {
	if gr.forward != nil {
		return gr.forward, nil
	}
	outs := []*gorgonia.Node{gr.Logits}
	if gr.DistLogits != nil {
		outs = append(outs, gr.DistLogits)
	}
	p, err := runner.Compile(gr.G, outs...)
	if err != nil {
		return nil, err
	}
	p.Substitute(gr.G, ops.NativeOp)
	gr.forward = p
	return p, nil
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
// Run into dst, (B, classes).
func (gr *Graph) HeadLogits(head *gorgonia.Node, dst []float32) []float32 {
	return append(dst[:0], gr.Value(head).Data().([]float32)...)
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
		d := v.Data().([]float32)
		for i := range dst {
			dst[i] += w * d[i]
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

// FreezeWeights makes the graph's linear layers pack their weights for the
// matrix kernels once, at the next Run, and reuse those copies on every
// Run after it instead of packing the weights again for every product:
// faster inference for a second copy of the weights in memory. Only an
// evaluation graph can be frozen, and only while the network's weights do
// not change; after a change, FreezeWeights again, which packs them anew.
func (gr *Graph) FreezeWeights() error {
	if gr.Training {
		return fmt.Errorf("nn: a training graph's weights change every step and cannot be frozen")
	}
	gr.setFrozen(true)
	return nil
}

// Frozen reports whether FreezeWeights is in effect.
func (gr *Graph) Frozen() bool { return gr.frozen }

// KeepWeightsPacked makes the training graph's layers whose products run
// in low precision keep their weights packed from step to step
// (ops.WeightPacker), and returns them by parameter: packers[i] are those
// whose weight is ParamNodes[i]. The caller keeps the packed copies
// current: StartRepack before the weights change, and RepackWeightRows
// over every row of the new values (optim.RowReporter), else each
// forward pass packs them anew. Call it before the graph's first run.
func (gr *Graph) KeepWeightsPacked() ([][]ops.WeightPacker, error) {
	if !gr.Training {
		return nil, fmt.Errorf("nn: an evaluation graph's weights are packed once, by FreezeWeights")
	}
	index := make(map[*gorgonia.Node]int, len(gr.ParamNodes))
	for i, p := range gr.ParamNodes {
		index[p] = i
	}
	packers := make([][]ops.WeightPacker, len(gr.ParamNodes))
	for _, n := range gr.G.AllNodes() {
		op, ok := n.Op().(ops.WeightPacker)
		if !ok {
			continue
		}
		in := runner.Inputs(gr.G, n)
		if op.WeightArg() >= len(in) {
			continue
		}
		if i, ok := index[in[op.WeightArg()]]; ok && op.KeepWeightPacked() {
			packers[i] = append(packers[i], op)
		}
	}
	return packers, nil
}

// setFrozen freezes or thaws every op whose weight operand is one of the
// network's parameters.
func (gr *Graph) setFrozen(frozen bool) {
	gr.frozen = frozen
	params := make(map[*gorgonia.Node]bool, len(gr.ParamNodes))
	for _, p := range gr.ParamNodes {
		params[p] = true
	}
	for _, n := range gr.G.AllNodes() {
		op, ok := n.Op().(ops.WeightFreezer)
		if !ok {
			continue
		}
		if in := runner.Inputs(gr.G, n); op.WeightArg() < len(in) && params[in[op.WeightArg()]] {
			op.FreezeWeight(frozen)
		}
	}
}
