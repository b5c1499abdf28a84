package onnx

import (
	"fmt"

	"github.com/vit-train/vit-train/formats/safetensors"
)

// Builder adds nodes and initializers to a Graph, one op at a time, and
// keeps the first error so that a graph is written without checking each
// call. Every node has one output, named after the node. Initializers
// are added once per name, however many nodes use them.
type Builder struct {
	g       Graph
	tensors map[string]safetensors.Tensor
	added   map[string]bool
	err     error
}

// NewBuilder starts an empty graph whose parameters (Param) are tensors,
// by name. The initializers share the tensors' data.
func NewBuilder(tensors []safetensors.Tensor) *Builder {
	b := &Builder{tensors: map[string]safetensors.Tensor{}, added: map[string]bool{}}
	for _, t := range tensors {
		b.tensors[t.Name] = t
	}
	return b
}

// Graph returns the graph built so far and the first error of its
// building.
func (b *Builder) Graph() (Graph, error) { return b.g, b.err }

// Param adds the tensor called name as an initializer and returns its
// name. A name the builder's tensors lack is an error.
func (b *Builder) Param(name string) string {
	if b.added[name] {
		return name
	}
	t, ok := b.tensors[name]
	if !ok {
		b.fail(fmt.Errorf("the network has no tensor %q", name))
		return name
	}
	dims := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		dims[i] = int64(d)
	}
	b.g.Initializers = append(b.g.Initializers, Tensor{Name: name, Dims: dims, Float32: t.Data})
	b.added[name] = true
	return name
}

// Floats adds a float32 constant of shape dims (nil for a scalar) and
// returns its name.
func (b *Builder) Floats(name string, dims []int64, v ...float32) string {
	if !b.added[name] {
		b.g.Initializers = append(b.g.Initializers, Tensor{Name: name, Dims: dims, Float32: v})
		b.added[name] = true
	}
	return name
}

// Ints adds an int64 constant of shape dims (nil for a scalar) and
// returns its name.
func (b *Builder) Ints(name string, dims []int64, v ...int64) string {
	if !b.added[name] {
		b.g.Initializers = append(b.g.Initializers, Tensor{Name: name, Dims: dims, Int64: v})
		b.added[name] = true
	}
	return name
}

// Node adds an op of the given inputs whose one output is named out, and
// returns out.
func (b *Builder) Node(op, out string, inputs []string, attrs ...Attribute) string {
	b.g.Nodes = append(b.g.Nodes, Node{OpType: op, Name: out, Inputs: inputs, Outputs: []string{out}, Attrs: attrs})
	return out
}

// Gemm is a linear layer on rows, (batch, in) → (batch, out): x·Wᵀ + b,
// with the parameters layer+".weight" (out, in) and layer+".bias" (out),
// PyTorch's names. Its output is named layer.
func (b *Builder) Gemm(x, layer string) string {
	return b.Node("Gemm", layer, []string{x, b.Param(layer + ".weight"), b.Param(layer + ".bias")}, IntAttr("transB", 1))
}

// Input declares a graph input of element type t and shape dims.
func (b *Builder) Input(name string, t DataType, dims ...Dim) string {
	b.g.Inputs = append(b.g.Inputs, ValueInfo{Name: name, Type: t, Dims: dims})
	return name
}

// Output declares the node output name as a graph output of element type
// t and shape dims.
func (b *Builder) Output(name string, t DataType, dims ...Dim) {
	b.g.Outputs = append(b.g.Outputs, ValueInfo{Name: name, Type: t, Dims: dims})
}

// fail records err unless an earlier error was recorded.
func (b *Builder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}
