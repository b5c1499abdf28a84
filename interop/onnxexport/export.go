// Package onnxexport translates a vit-train network into an ONNX graph
// (opset 17) that computes what the network's evaluation graph computes:
//
//   - a ViT or DeiT, from the patch embedding (a Conv of kernel and stride
//     P) through the [CLS] (and distillation) tokens, pos_embed, the pre-LN
//     blocks (LayerNormalization, fused-qkv multi-head attention scaled by
//     1/√(D/H), exact erf GELU) and the final norm to the head on [CLS]; a
//     distilled model's output is the mean of its two heads, DeiT's
//     inference rule;
//   - a ResNet (CIFAR or torchvision), with batch norms in evaluation mode
//     (running statistics, eps 1e-5).
//
// The input "pixel_values" is (batch, C, H, W), preprocessed as the
// model's metadata_props record; the output "logits" is (batch, classes).
// The batch axis is dynamic. Initializers carry the checkpoint's tensors
// under their timm (torchvision) names and layouts; linear weights are
// transposed by Transpose nodes, which a runtime folds when it loads the
// model.
package onnxexport

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/formats/onnx"
	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/resnet"
	"github.com/vit-train/vit-train/model/vit"
)

// Opset is the version of the ONNX operator set the graphs use: 17, the
// first with LayerNormalization.
const Opset = 17

// Names of the graph's inputs and outputs.
const (
	Input      = "pixel_values" // (batch, C, H, W)
	Logits     = "logits"       // (batch, classes): the prediction
	ClsLogits  = "cls_logits"   // (batch, classes): a distilled model's class head, on [CLS]
	DistLogits = "dist_logits"  // (batch, classes): a distilled model's distillation head
	batchDim   = "batch"
)

// Options say what Export writes.
type Options struct {
	// BothHeads adds a distilled model's two heads as the outputs
	// ClsLogits and DistLogits, after Logits (their mean).
	BothHeads bool
	// Eval is the evaluation pipeline the model's images go through
	// (resize and crop, mean and std): what metadata_props record.
	Eval augment.Pipeline
	// Classes are the class names, one per logit; empty means none are
	// recorded.
	Classes []string
	// ProducerVersion is recorded as the model's producer_version.
	ProducerVersion string
}

// Export builds the ONNX model of net. The model's initializers share
// net's tensors; it is an error for a setting that cannot take effect
// (BothHeads for a model with one head) or for a network of another
// architecture.
func Export(net model.Network, o Options) (*onnx.Model, error) {
	b := newBuilder(net)
	var err error
	// The ONNX graph of each architecture is written op by op, so the
	// exporter knows the architectures it writes by their configuration.
	switch c := net.Spec().Config.(type) {
	case vit.Config:
		if o.BothHeads && !c.Distilled {
			return nil, fmt.Errorf("onnx export of %s: the model has one head; both heads (cls_logits, dist_logits) exist for distilled models only", net.Spec().Name())
		}
		err = b.vit(c, o.BothHeads)
	case resnet.Spec:
		if o.BothHeads {
			return nil, fmt.Errorf("onnx export of %s: a ResNet has one head; both heads (cls_logits, dist_logits) exist for distilled ViTs only", net.Spec().Name())
		}
		err = b.resnet(net)
	default:
		err = fmt.Errorf("architecture %q is not supported (ViT, DeiT and ResNet are)", net.Spec().Arch())
	}
	if err == nil {
		err = b.err
	}
	if err != nil {
		return nil, fmt.Errorf("onnx export of %s: %w", net.Spec().Name(), err)
	}
	meta, err := metadata(net, o)
	if err != nil {
		return nil, fmt.Errorf("onnx export of %s: %w", net.Spec().Name(), err)
	}
	m := &onnx.Model{ProducerName: "vit-train", ProducerVersion: o.ProducerVersion, Opset: Opset, Graph: b.g, Metadata: meta,
		Doc: net.Describe()}
	m.Graph.Name = net.Spec().Name()
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("onnx export of %s: %w", net.Spec().Name(), err)
	}
	return m, nil
}

// metadata records how to feed the model and what it returns.
func metadata(net model.Network, o Options) ([]onnx.Property, error) {
	channels, size := net.Spec().Input()
	p := o.Eval
	if p.Height != size || p.Width != size {
		return nil, fmt.Errorf("the evaluation pipeline makes %d×%d images, the model takes %d×%d", p.Height, p.Width, size, size)
	}
	if len(p.Mean) != channels || len(p.Std) != channels {
		return nil, fmt.Errorf("the normalisation has %d means and %d stds, the model takes %d channels", len(p.Mean), len(p.Std), channels)
	}
	steps, props, err := describe(p.Transform)
	if err != nil {
		return nil, err
	}
	mean, _ := json.Marshal(p.Mean)
	std, _ := json.Marshal(p.Std)
	color := "RGB"
	if channels == 1 {
		color = "grayscale"
	} else if channels != 3 {
		color = strconv.Itoa(channels) + " channels"
	}
	steps = append(steps, "scale pixels to [0, 1]", "normalise each channel: (x − mean) / std")
	meta := []onnx.Property{
		{Key: "model", Value: net.Spec().Name()},
		{Key: "input", Value: fmt.Sprintf("%s: float32 (batch, %d, %d, %d), NCHW, %s", Input, channels, size, size, color)},
		{Key: "output", Value: outputDoc(net, o.BothHeads)},
		{Key: "preprocessing", Value: strings.Join(steps, "; ")},
		{Key: "image_size", Value: strconv.Itoa(size)},
		{Key: "channels", Value: strconv.Itoa(channels)},
		{Key: "color", Value: color},
		{Key: "mean", Value: string(mean)},
		{Key: "std", Value: string(std)},
		{Key: "pixel_scale", Value: "1/255"},
	}
	meta = append(meta, props...)
	if len(o.Classes) > 0 {
		if len(o.Classes) != net.Spec().NumClasses() {
			return nil, fmt.Errorf("%d class names for %d classes", len(o.Classes), net.Spec().NumClasses())
		}
		classes, _ := json.Marshal(o.Classes)
		meta = append(meta, onnx.Property{Key: "classes", Value: string(classes)})
	}
	spec, err := specJSON(net.Spec())
	if err != nil {
		return nil, err
	}
	return append(meta, onnx.Property{Key: "vit_train.model", Value: spec}), nil
}

func outputDoc(net model.Network, both bool) string {
	k := net.Spec().NumClasses()
	if c, ok := net.Spec().Config.(vit.Config); ok && c.Distilled {
		doc := fmt.Sprintf("%s: float32 (batch, %d), the mean of the class head (on [CLS]) and the distillation head (on the distillation token), DeiT's inference rule", Logits, k)
		if both {
			doc += fmt.Sprintf("; %s and %s: the two heads", ClsLogits, DistLogits)
		}
		return doc
	}
	return fmt.Sprintf("%s: float32 (batch, %d), before softmax", Logits, k)
}

// specJSON is the network's configuration as a checkpoint records it.
func specJSON(s model.Spec) (string, error) {
	_, b, err := model.EncodeConfig(s)
	return string(b), err
}

// describe turns the evaluation transform into preprocessing steps and
// the properties that give their sizes and filter.
func describe(t augment.Transform) ([]string, []onnx.Property, error) {
	switch t := t.(type) {
	case nil:
		return nil, nil, nil
	case augment.Composed:
		var steps []string
		var props []onnx.Property
		for _, s := range t {
			st, p, err := describe(s)
			if err != nil {
				return nil, nil, err
			}
			steps, props = append(steps, st...), append(props, p...)
		}
		return steps, props, nil
	case augment.ResizeTo:
		return []string{fmt.Sprintf("resize to %d×%d (%s) unless already that size", t.W, t.H, t.Interp)},
			[]onnx.Property{{Key: "resize", Value: fmt.Sprintf("%dx%d", t.W, t.H)}, {Key: "interpolation", Value: t.Interp.String()}}, nil
	case augment.Resize:
		return []string{fmt.Sprintf("resize the shorter side to %d, keeping the aspect ratio (%s)", t.Size, t.Interp)},
			[]onnx.Property{{Key: "resize_shorter_side", Value: strconv.Itoa(t.Size)}, {Key: "interpolation", Value: t.Interp.String()}}, nil
	case augment.CenterCrop:
		return []string{fmt.Sprintf("crop the central %d×%d", t.W, t.H)},
			[]onnx.Property{{Key: "center_crop", Value: fmt.Sprintf("%dx%d", t.W, t.H)}}, nil
	}
	return nil, nil, fmt.Errorf("the evaluation transform %T cannot be described in the model's metadata", t)
}

// builder adds nodes and initializers to a graph, keeping the first error.
type builder struct {
	g       onnx.Graph
	tensors map[string]safetensors.Tensor
	added   map[string]bool
	err     error
}

func newBuilder(net model.Network) *builder {
	b := &builder{tensors: map[string]safetensors.Tensor{}, added: map[string]bool{}}
	for _, t := range net.Tensors() {
		b.tensors[t.Name] = t
	}
	return b
}

// param adds the network's tensor name as an initializer (once) and
// returns its name.
func (b *builder) param(name string) string {
	if b.added[name] {
		return name
	}
	t, ok := b.tensors[name]
	if !ok {
		if b.err == nil {
			b.err = fmt.Errorf("the network has no tensor %q", name)
		}
		return name
	}
	dims := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		dims[i] = int64(d)
	}
	b.g.Initializers = append(b.g.Initializers, onnx.Tensor{Name: name, Dims: dims, Float32: t.Data})
	b.added[name] = true
	return name
}

// floats adds a float32 constant (once) and returns its name.
func (b *builder) floats(name string, dims []int64, v ...float32) string {
	if !b.added[name] {
		b.g.Initializers = append(b.g.Initializers, onnx.Tensor{Name: name, Dims: dims, Float32: v})
		b.added[name] = true
	}
	return name
}

// ints adds an int64 constant (once) and returns its name; dims nil makes
// a scalar of one value.
func (b *builder) ints(name string, dims []int64, v ...int64) string {
	if !b.added[name] {
		b.g.Initializers = append(b.g.Initializers, onnx.Tensor{Name: name, Dims: dims, Int64: v})
		b.added[name] = true
	}
	return name
}

// node adds an op whose one output is named out, and returns out.
func (b *builder) node(op, out string, inputs []string, attrs ...onnx.Attribute) string {
	b.g.Nodes = append(b.g.Nodes, onnx.Node{OpType: op, Name: out, Inputs: inputs, Outputs: []string{out}, Attrs: attrs})
	return out
}

// gemm is a linear layer on (batch, in) rows: x·Wᵀ + b, W (out, in).
func (b *builder) gemm(x, layer string) string {
	return b.node("Gemm", layer, []string{x, b.param(layer + ".weight"), b.param(layer + ".bias")}, onnx.IntAttr("transB", 1))
}

func (b *builder) input(channels, size int) string {
	b.g.Inputs = append(b.g.Inputs, onnx.ValueInfo{Name: Input, Type: onnx.Float,
		Dims: []onnx.Dim{{Param: batchDim}, {Value: int64(channels)}, {Value: int64(size)}, {Value: int64(size)}}})
	return Input
}

func (b *builder) output(name string, classes int) {
	b.g.Outputs = append(b.g.Outputs, onnx.ValueInfo{Name: name, Type: onnx.Float, Dims: []onnx.Dim{{Param: batchDim}, {Value: int64(classes)}}})
}
