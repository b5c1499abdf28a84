package onnx

import "strconv"

// IRVersion is the ONNX IR version Write records: 8, the version that
// opsets 17 and 18 belong to.
const IRVersion = 8

// DataType is a TensorProto.DataType.
type DataType int32

// The element types this package writes.
const (
	Float DataType = 1 // float32
	Int64 DataType = 7
)

func (t DataType) String() string {
	switch t {
	case Float:
		return "float32"
	case Int64:
		return "int64"
	}
	return "data type " + strconv.Itoa(int(t))
}

// Model is an ONNX model: one graph, the operator set it uses and
// string metadata.
type Model struct {
	ProducerName    string
	ProducerVersion string
	Doc             string
	Opset           int64 // the version of the default ("ai.onnx") operator set
	Graph           Graph
	Metadata        []Property // metadata_props, in order; keys must be distinct
}

// Property is one metadata entry.
type Property struct{ Key, Value string }

// Graph is a computation graph: nodes in topological order over named
// values, the graph's inputs and outputs, and constant initializers.
type Graph struct {
	Name         string
	Doc          string
	Nodes        []Node
	Initializers []Tensor
	Inputs       []ValueInfo
	Outputs      []ValueInfo
}

// Node applies an operator (OpType, of the default domain) to named values.
type Node struct {
	OpType  string
	Name    string
	Inputs  []string // "" marks an omitted optional input
	Outputs []string
	Attrs   []Attribute
}

// Tensor is a named constant. Exactly one of Float32 and Int64 holds its
// values, in row-major order; Dims is its shape (empty for a scalar).
type Tensor struct {
	Name    string
	Dims    []int64
	Float32 []float32
	Int64   []int64
}

// DataType is the tensor's element type.
func (t *Tensor) DataType() DataType {
	if t.Int64 != nil {
		return Int64
	}
	return Float
}

// Len is the number of values the tensor holds.
func (t *Tensor) Len() int {
	if t.Int64 != nil {
		return len(t.Int64)
	}
	return len(t.Float32)
}

// NumBytes is the size of the tensor's raw data.
func (t *Tensor) NumBytes() int64 {
	if t.Int64 != nil {
		return 8 * int64(len(t.Int64))
	}
	return 4 * int64(len(t.Float32))
}

// ValueInfo names a graph input or output with its element type and shape.
type ValueInfo struct {
	Name string
	Type DataType
	Dims []Dim
}

// Dim is one dimension of a shape: a fixed size, or, when Param is set, a
// symbolic one (such as a dynamic batch size) that Param names.
type Dim struct {
	Value int64
	Param string
}

// AttributeType is an AttributeProto.AttributeType.
type AttributeType int32

// The attribute types this package writes.
const (
	AttrFloat  AttributeType = 1
	AttrInt    AttributeType = 2
	AttrString AttributeType = 3
	AttrTensor AttributeType = 4
	AttrFloats AttributeType = 6
	AttrInts   AttributeType = 7
)

// Attribute is one named attribute of a node; Type says which value field
// holds its value.
type Attribute struct {
	Name   string
	Type   AttributeType
	Float  float32
	Int    int64
	String string
	Tensor *Tensor
	Floats []float32
	Ints   []int64
}

// FloatAttr is a float attribute.
func FloatAttr(name string, v float32) Attribute {
	return Attribute{Name: name, Type: AttrFloat, Float: v}
}

// IntAttr is an integer attribute.
func IntAttr(name string, v int64) Attribute { return Attribute{Name: name, Type: AttrInt, Int: v} }

// IntsAttr is a list-of-integers attribute.
func IntsAttr(name string, v ...int64) Attribute {
	return Attribute{Name: name, Type: AttrInts, Ints: v}
}

// StringAttr is a string attribute.
func StringAttr(name, v string) Attribute {
	return Attribute{Name: name, Type: AttrString, String: v}
}

// TensorAttr is a tensor attribute (the value of a Constant node).
func TensorAttr(name string, t Tensor) Attribute {
	return Attribute{Name: name, Type: AttrTensor, Tensor: &t}
}

// FloatsAttr is a list-of-floats attribute.
func FloatsAttr(name string, v ...float32) Attribute {
	return Attribute{Name: name, Type: AttrFloats, Floats: v}
}
