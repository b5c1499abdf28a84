// Package onnxexport writes a vit-train network as an ONNX model (opset
// 17) that computes what the network's evaluation graph computes. Each
// architecture writes its own operators (model.ONNXWriter: model/vit's
// ViT and DeiT, model/resnet's ResNets) with formats/onnx's Builder; this
// package declares the input and outputs, checks the options and records
// the preprocessing.
//
// The input "pixel_values" is (batch, C, H, W), preprocessed as the
// model's metadata_props record; the output "logits" is (batch, classes),
// and a distilled model's "cls_logits" and "dist_logits" on request. The
// batch axis is dynamic. Initializers carry the checkpoint's tensors
// under their timm (torchvision) names and layouts.
package onnxexport

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/formats/onnx"
	"github.com/vit-train/vit-train/model"
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

// Export builds the ONNX model of net, whose architecture writes its own
// graph (model.ONNXWriter). The model's initializers share net's tensors;
// it is an error for a setting that cannot take effect (BothHeads for a
// model with one head) or for an architecture that writes no ONNX graph.
func Export(net model.Network, o Options) (*onnx.Model, error) {
	name := net.Spec().Name()
	g, heads, err := graph(net, o.BothHeads)
	if err != nil {
		return nil, fmt.Errorf("onnx export of %s: %w", name, err)
	}
	meta, err := metadata(net, heads, o)
	if err != nil {
		return nil, fmt.Errorf("onnx export of %s: %w", name, err)
	}
	m := &onnx.Model{ProducerName: "vit-train", ProducerVersion: o.ProducerVersion, Opset: Opset, Graph: g, Metadata: meta,
		Doc: net.Describe()}
	m.Graph.Name = name
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("onnx export of %s: %w", name, err)
	}
	return m, nil
}

// graph is net's evaluation graph from the input Input to the output
// Logits and, with bothHeads, a distilled network's ClsLogits and
// DistLogits.
func graph(net model.Network, bothHeads bool) (onnx.Graph, model.ONNXHeads, error) {
	w, ok := net.(model.ONNXWriter)
	if !ok {
		return onnx.Graph{}, model.ONNXHeads{}, fmt.Errorf("architecture %q writes no ONNX graph", net.Spec().Arch())
	}
	b := onnx.NewBuilder(net.Tensors())
	channels, size := net.Spec().Input()
	images := b.Input(Input, onnx.Float, onnx.Dim{Param: batchDim}, onnx.Dim{Value: int64(channels)}, onnx.Dim{Value: int64(size)}, onnx.Dim{Value: int64(size)})
	heads, err := w.WriteONNX(b, images)
	if err != nil {
		return onnx.Graph{}, heads, err
	}
	if bothHeads && !heads.Distilled() {
		return onnx.Graph{}, heads, fmt.Errorf("the model has one head; both heads (%s, %s) exist for distilled models only", ClsLogits, DistLogits)
	}
	outputs := [][2]string{{Logits, heads.Logits}}
	if bothHeads {
		outputs = append(outputs, [2]string{ClsLogits, heads.Class}, [2]string{DistLogits, heads.Distillation})
	}
	logits := []onnx.Dim{{Param: batchDim}, {Value: int64(net.Spec().NumClasses())}}
	for _, out := range outputs {
		b.Node("Identity", out[0], []string{out[1]})
		b.Output(out[0], onnx.Float, logits...)
	}
	g, err := b.Graph()
	return g, heads, err
}

// metadata records how to feed the model and what it returns, and the
// network as a checkpoint records it: its architecture under
// "vit_train.arch" and its configuration under the key the architecture
// registered (model.EncodeConfig: "vit_train.model" for a ViT,
// "vit_train.resnet" for a ResNet).
func metadata(net model.Network, heads model.ONNXHeads, o Options) ([]onnx.Property, error) {
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
		{Key: "output", Value: outputDoc(net.Spec().NumClasses(), heads, o.BothHeads)},
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
	key, spec, err := model.EncodeConfig(net.Spec())
	if err != nil {
		return nil, err
	}
	return append(meta, onnx.Property{Key: "vit_train.arch", Value: net.Spec().Arch()}, onnx.Property{Key: key, Value: string(spec)}), nil
}

// outputDoc describes the graph's outputs, (batch, k) logits each.
func outputDoc(k int, heads model.ONNXHeads, both bool) string {
	if heads.Distilled() {
		doc := fmt.Sprintf("%s: float32 (batch, %d), the mean of the class head (on [CLS]) and the distillation head (on the distillation token), DeiT's inference rule", Logits, k)
		if both {
			doc += fmt.Sprintf("; %s and %s: the two heads", ClsLogits, DistLogits)
		}
		return doc
	}
	return fmt.Sprintf("%s: float32 (batch, %d), before softmax", Logits, k)
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
