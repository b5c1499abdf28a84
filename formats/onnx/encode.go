package onnx

import "strconv"

// Field numbers of onnx.proto.
const (
	modelIRVersion       = 1
	modelProducerName    = 2
	modelProducerVersion = 3
	modelDocString       = 6
	modelGraph           = 7
	modelOpsetImport     = 8
	modelMetadataProps   = 14

	opsetDomain  = 1
	opsetVersion = 2

	entryKey   = 1
	entryValue = 2

	graphNode        = 1
	graphName        = 2
	graphInitializer = 5
	graphDocString   = 10
	graphInput       = 11
	graphOutput      = 12

	nodeInput     = 1
	nodeOutput    = 2
	nodeName      = 3
	nodeOpType    = 4
	nodeAttribute = 5

	attrName   = 1
	attrF      = 2
	attrI      = 3
	attrS      = 4
	attrT      = 5
	attrFloats = 7
	attrInts   = 8
	attrType   = 20

	tensorDims         = 1
	tensorDataType     = 2
	tensorName         = 8
	tensorRawData      = 9
	tensorExternalData = 13
	tensorDataLocation = 14

	valueInfoName = 1
	valueInfoType = 2

	typeTensorType   = 1
	tensorElemType   = 1
	tensorShape      = 2
	shapeDim         = 1
	dimValue         = 1
	dimParam         = 2
	locationExternal = 1
)

// externalData collects the payloads of the tensors stored outside the
// model file, each at an offset aligned to externalAlign.
type externalData struct {
	location string // the data file's name, relative to the model's folder
	parts    []part
	size     int64
}

// externalAlign is the alignment of each tensor in the data file: a page,
// so that a runtime can map tensors from it (onnx.proto: offsets SHOULD be
// multiples of 4096).
const externalAlign = 4096

// externalMin is the size from which a tensor goes to the data file when
// there is one; smaller tensors stay inline (as onnx.save_model's
// size_threshold of 1024 bytes).
const externalMin = 1024

// add appends t's values to the data file and returns their offset.
func (e *externalData) add(t *Tensor) int64 {
	if pad := (externalAlign - e.size%externalAlign) % externalAlign; pad > 0 {
		e.parts = append(e.parts, part{b: make([]byte, pad)})
		e.size += pad
	}
	off := e.size
	e.parts = append(e.parts, part{f: t.Float32, i: t.Int64})
	e.size += t.NumBytes()
	return off
}

func encodeModel(m *Model, ext *externalData) *message {
	var e message
	e.varint(modelIRVersion, IRVersion)
	e.string(modelProducerName, m.ProducerName)
	e.string(modelProducerVersion, m.ProducerVersion)
	e.string(modelDocString, m.Doc)
	e.message(modelGraph, encodeGraph(&m.Graph, ext))
	var opset message
	opset.varint(opsetVersion, m.Opset)
	e.message(modelOpsetImport, &opset)
	for _, p := range m.Metadata {
		var kv message
		kv.string(entryKey, p.Key)
		kv.string(entryValue, p.Value)
		e.message(modelMetadataProps, &kv)
	}
	return &e
}

func encodeGraph(g *Graph, ext *externalData) *message {
	var e message
	for i := range g.Nodes {
		e.message(graphNode, encodeNode(&g.Nodes[i]))
	}
	e.string(graphName, g.Name)
	for i := range g.Initializers {
		e.message(graphInitializer, encodeTensor(&g.Initializers[i], ext))
	}
	e.string(graphDocString, g.Doc)
	for i := range g.Inputs {
		e.message(graphInput, encodeValueInfo(&g.Inputs[i]))
	}
	for i := range g.Outputs {
		e.message(graphOutput, encodeValueInfo(&g.Outputs[i]))
	}
	return &e
}

func encodeNode(n *Node) *message {
	var e message
	e.repeatedString(nodeInput, n.Inputs)
	e.repeatedString(nodeOutput, n.Outputs)
	e.string(nodeName, n.Name)
	e.string(nodeOpType, n.OpType)
	for i := range n.Attrs {
		e.message(nodeAttribute, encodeAttribute(&n.Attrs[i]))
	}
	return &e
}

func encodeAttribute(a *Attribute) *message {
	var e message
	e.string(attrName, a.Name)
	switch a.Type {
	case AttrFloat:
		e.float32(attrF, a.Float)
	case AttrInt:
		e.varint(attrI, a.Int)
	case AttrString:
		e.repeatedString(attrS, []string{a.String})
	case AttrTensor:
		e.message(attrT, encodeTensor(a.Tensor, nil))
	case AttrFloats:
		for _, v := range a.Floats {
			e.float32(attrFloats, v)
		}
	case AttrInts:
		for _, v := range a.Ints {
			e.varint(attrInts, v)
		}
	}
	e.varint(attrType, int64(a.Type))
	return &e
}

// encodeTensor writes t with its values inline, or, when ext is set and t
// is large enough, in ext's data file.
func encodeTensor(t *Tensor, ext *externalData) *message {
	var e message
	for _, d := range t.Dims {
		e.varint(tensorDims, d)
	}
	e.varint(tensorDataType, int64(t.DataType()))
	e.string(tensorName, t.Name)
	if ext == nil || t.NumBytes() < externalMin {
		e.payload(tensorRawData, part{f: t.Float32, i: t.Int64})
		return &e
	}
	off := ext.add(t)
	for _, kv := range [][2]string{{"location", ext.location}, {"offset", strconv.FormatInt(off, 10)}, {"length", strconv.FormatInt(t.NumBytes(), 10)}} {
		var entry message
		entry.string(entryKey, kv[0])
		entry.string(entryValue, kv[1])
		e.message(tensorExternalData, &entry)
	}
	e.varint(tensorDataLocation, locationExternal)
	return &e
}

func encodeValueInfo(v *ValueInfo) *message {
	var shape message
	for _, d := range v.Dims {
		var dim message
		if d.Param != "" {
			dim.string(dimParam, d.Param)
		} else {
			dim.varint(dimValue, d.Value)
		}
		shape.message(shapeDim, &dim)
	}
	var tensor message
	tensor.varint(tensorElemType, int64(v.Type))
	tensor.message(tensorShape, &shape)
	var typ message
	typ.message(typeTensorType, &tensor)
	var e message
	e.string(valueInfoName, v.Name)
	e.message(valueInfoType, &typ)
	return &e
}
