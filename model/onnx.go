package model

import "github.com/vit-train/vit-train/formats/onnx"

// ONNXWriter is implemented by the networks that can write their
// evaluation graph as ONNX operators (opset 17), for interop/onnxexport.
type ONNXWriter interface {
	// WriteONNX adds to b the network's evaluation graph (no dropout or
	// drop-path, batch norms on their running statistics), from the graph
	// input images, (batch, C, H, W) as the network takes them, to the
	// logits of its heads, (batch, classes) each. Parameters are added with
	// b.Param under their checkpoint names.
	WriteONNX(b *onnx.Builder, images string) (ONNXHeads, error)
}

// ONNXHeads names the nodes that compute a network's logits in its ONNX
// graph.
type ONNXHeads struct {
	// Logits is the prediction: the one head, or the mean of a distilled
	// network's two heads (DeiT's inference rule).
	Logits string
	// Class and Distillation are a distilled network's two heads, on the
	// class and the distillation token; both "" for a network with one
	// head.
	Class, Distillation string
}

// Distilled reports whether the network has a distillation head.
func (h ONNXHeads) Distilled() bool { return h.Distillation != "" }
