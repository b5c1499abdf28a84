package nn

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/runner"
)

// Input adds a named input tensor of the model's dtype to the graph, e.g. the
// soft targets (B, classes) or teacher logits; write values into the
// returned tensor's Data before each run. Its dtype is the images'.
func (gr *Graph) Input(name string, shape ...int) (*gorgonia.Node, *tensor.Dense) {
	dt := gr.Images.Dtype()
	t := tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
	n := gorgonia.NewTensor(gr.G, dt, len(shape), gorgonia.WithShape(shape...),
		gorgonia.WithName(name), gorgonia.WithValue(t))
	return n, t
}

// Step is a compiled training step: the forward pass, a scalar loss, any
// extra outputs (loss terms for logging) and the gradient of the loss with
// respect to every parameter, computed by one Run with reused buffers.
type Step struct {
	*Graph
	Loss  *gorgonia.Node
	Extra []*gorgonia.Node
	Grads []*gorgonia.Node // aligned with Graph.ParamNodes
	prog  *runner.Program
	grads *runner.Watch // when each gradient is final in a run
}

// Differentiate compiles a training step minimising loss, a scalar node of gr.
func (gr *Graph) Differentiate(loss *gorgonia.Node, extra ...*gorgonia.Node) (*Step, error) {
	if loss == nil || !loss.IsScalar() {
		return nil, fmt.Errorf("nn: the loss must be a scalar node")
	}
	grads, err := gorgonia.Grad(loss, gr.ParamNodes...)
	if err != nil {
		return nil, fmt.Errorf("nn: differentiating the loss: %w", err)
	}
	outs := append(append([]*gorgonia.Node{loss, gr.Logits}, extra...), grads...)
	if gr.DistLogits != nil {
		outs = append(outs, gr.DistLogits)
	}
	var recompute []runner.Segment
	if gr.GradCheckpointing {
		recompute = gr.Blocks
	}
	// Gorgonia's Adds sum the gradients of values read more than once. One
	// whose term is LayerNorm's input gradient is merged into that op;
	// the others, which allocate on every run, are ops' Add, the same
	// sums in place.
	prog, err := runner.CompileWith(gr.G, runner.Options{Segments: recompute, Merge: ops.MergeSum}, outs...)
	if err != nil {
		return nil, err
	}
	prog.Substitute(gr.G, ops.NativeOp)
	gr.forward = prog // Value and Predictions read the step's run
	watch, err := prog.Watch(grads)
	if err != nil {
		return nil, err
	}
	return &Step{Graph: gr, Loss: loss, Extra: extra, Grads: grads, prog: prog, grads: watch}, nil
}

// Run computes the loss and the gradients.
func (s *Step) Run() error { return s.prog.Run() }

// RunReportingGrads is Run that calls ready(i) for every parameter i, once,
// as soon as the backward pass has computed its gradient (Grad(i) then
// holds it), so that a data-parallel job can start averaging the last
// layers' gradients while the first layers' are still being computed. An
// error from ready stops the run.
func (s *Step) RunReportingGrads(ready func(i int) error) error {
	return s.prog.RunWatch(s.grads, ready)
}

// BufferBytes is the size of the step's planned activation and gradient
// buffers (see runner.Program.BufferBytes).
func (s *Step) BufferBytes() int64 { return s.prog.BufferBytes() }

// Steps is the number of op nodes one Run executes.
func (s *Step) Steps() int { return s.prog.Steps() }

// LossValue is the loss of the last Run.
func (s *Step) LossValue() float64 { return scalar(s.prog.Value(s.Loss)) }

// ExtraValue is extra output i of the last Run, as a float64 scalar.
func (s *Step) ExtraValue(i int) float64 { return scalar(s.prog.Value(s.Extra[i])) }

// Grad returns parameter i's gradient of the last Run as float32, shaped as
// the parameter and laid out row-major. The slice is the step's buffer:
// read it before the next Run. A graph of another dtype or an i outside
// [0, len(Grads)) is an error.
func (s *Step) Grad(i int) ([]float32, error) {
	if i < 0 || i >= len(s.Grads) {
		return nil, fmt.Errorf("step: gradient %d of %d", i, len(s.Grads))
	}
	v := s.prog.Value(s.Grads[i])
	if t, ok := v.(*tensor.Dense); ok && t.Dtype() == tensor.Float32 && !t.IsScalar() {
		return t.Float32s(), nil // Data would box a new slice header
	}
	d, ok := v.Data().([]float32)
	if !ok {
		return nil, fmt.Errorf("step: gradient %d is %v, not float32", i, s.Grads[i].Dtype())
	}
	return d, nil
}

func scalar(v gorgonia.Value) float64 {
	// A type switch on v itself: Data would box the value.
	switch d := v.(type) {
	case *gorgonia.F32:
		return float64(*d)
	case *gorgonia.F64:
		return float64(*d)
	case *tensor.Dense:
		switch d.Dtype() {
		case tensor.Float32:
			return float64(d.Float32s()[0])
		case tensor.Float64:
			return d.Float64s()[0]
		}
	}
	return 0
}
