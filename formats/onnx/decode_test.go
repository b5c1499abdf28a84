package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// This file decodes what Write encodes, independently of the encoder: a
// strict protowire reader of the onnx.proto subset the package documents,
// which rejects unknown fields and wrong wire types, so that the tests can
// check the bytes field by field.

// fieldFunc receives one field: v for varint and fixed32 fields, b for
// length-delimited ones.
type fieldFunc func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error

func eachField(b []byte, f fieldFunc) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v uint64
		var val []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var u uint32
			u, n = protowire.ConsumeFixed32(b)
			v = uint64(u)
		case protowire.BytesType:
			val, n = protowire.ConsumeBytes(b)
		default:
			return fmt.Errorf("field %d: wire type %d is never written", num, typ)
		}
		if n < 0 {
			return fmt.Errorf("field %d: %v", num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := f(num, typ, v, val); err != nil {
			return err
		}
	}
	return nil
}

func unexpected(msg string, num protowire.Number, typ protowire.Type) error {
	return fmt.Errorf("%s: unexpected field %d of wire type %d", msg, num, typ)
}

// decodeModel parses a ModelProto; external data is read from dir.
func decodeModel(b []byte, dir string) (*Model, int64, error) {
	m := &Model{}
	var ir int64
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v uint64, val []byte) error {
		switch {
		case num == modelIRVersion && typ == protowire.VarintType:
			ir = int64(v)
		case num == modelProducerName && typ == protowire.BytesType:
			m.ProducerName = string(val)
		case num == modelProducerVersion && typ == protowire.BytesType:
			m.ProducerVersion = string(val)
		case num == modelDocString && typ == protowire.BytesType:
			m.Doc = string(val)
		case num == modelGraph && typ == protowire.BytesType:
			return decodeGraph(val, dir, &m.Graph)
		case num == modelOpsetImport && typ == protowire.BytesType:
			return eachField(val, func(num protowire.Number, typ protowire.Type, v uint64, val []byte) error {
				switch {
				case num == opsetVersion && typ == protowire.VarintType:
					m.Opset = int64(v)
				case num == opsetDomain && typ == protowire.BytesType && len(val) == 0:
				default:
					return unexpected("OperatorSetIdProto", num, typ)
				}
				return nil
			})
		case num == modelMetadataProps && typ == protowire.BytesType:
			k, v, err := decodeEntry(val)
			m.Metadata = append(m.Metadata, Property{k, v})
			return err
		default:
			return unexpected("ModelProto", num, typ)
		}
		return nil
	})
	return m, ir, err
}

func decodeEntry(b []byte) (key, value string, err error) {
	err = eachField(b, func(num protowire.Number, typ protowire.Type, _ uint64, val []byte) error {
		switch {
		case num == entryKey && typ == protowire.BytesType:
			key = string(val)
		case num == entryValue && typ == protowire.BytesType:
			value = string(val)
		default:
			return unexpected("StringStringEntryProto", num, typ)
		}
		return nil
	})
	return key, value, err
}

func decodeGraph(b []byte, dir string, g *Graph) error {
	return eachField(b, func(num protowire.Number, typ protowire.Type, _ uint64, val []byte) error {
		if typ != protowire.BytesType {
			return unexpected("GraphProto", num, typ)
		}
		switch num {
		case graphNode:
			var n Node
			g.Nodes = append(g.Nodes, n)
			return decodeNode(val, &g.Nodes[len(g.Nodes)-1])
		case graphName:
			g.Name = string(val)
		case graphInitializer:
			t, err := decodeTensor(val, dir)
			g.Initializers = append(g.Initializers, t)
			return err
		case graphDocString:
			g.Doc = string(val)
		case graphInput, graphOutput:
			v, err := decodeValueInfo(val)
			if num == graphInput {
				g.Inputs = append(g.Inputs, v)
			} else {
				g.Outputs = append(g.Outputs, v)
			}
			return err
		default:
			return unexpected("GraphProto", num, typ)
		}
		return nil
	})
}

func decodeNode(b []byte, n *Node) error {
	return eachField(b, func(num protowire.Number, typ protowire.Type, _ uint64, val []byte) error {
		if typ != protowire.BytesType {
			return unexpected("NodeProto", num, typ)
		}
		switch num {
		case nodeInput:
			n.Inputs = append(n.Inputs, string(val))
		case nodeOutput:
			n.Outputs = append(n.Outputs, string(val))
		case nodeName:
			n.Name = string(val)
		case nodeOpType:
			n.OpType = string(val)
		case nodeAttribute:
			a, err := decodeAttribute(val)
			n.Attrs = append(n.Attrs, a)
			return err
		default:
			return unexpected("NodeProto", num, typ)
		}
		return nil
	})
}

func decodeAttribute(b []byte) (Attribute, error) {
	var a Attribute
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v uint64, val []byte) error {
		switch {
		case num == attrName && typ == protowire.BytesType:
			a.Name = string(val)
		case num == attrType && typ == protowire.VarintType:
			a.Type = AttributeType(v)
		case num == attrF && typ == protowire.Fixed32Type:
			a.Float = math.Float32frombits(uint32(v))
		case num == attrI && typ == protowire.VarintType:
			a.Int = int64(v)
		case num == attrS && typ == protowire.BytesType:
			a.String = string(val)
		case num == attrT && typ == protowire.BytesType:
			t, err := decodeTensor(val, "")
			a.Tensor = &t
			return err
		case num == attrFloats && typ == protowire.Fixed32Type:
			a.Floats = append(a.Floats, math.Float32frombits(uint32(v)))
		case num == attrInts && typ == protowire.VarintType:
			a.Ints = append(a.Ints, int64(v))
		default:
			return unexpected("AttributeProto", num, typ)
		}
		return nil
	})
	return a, err
}

func decodeTensor(b []byte, dir string) (Tensor, error) {
	var t Tensor
	var dataType DataType
	var raw []byte
	ext := map[string]string{}
	location := int64(0)
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v uint64, val []byte) error {
		switch {
		case num == tensorDims && typ == protowire.VarintType:
			t.Dims = append(t.Dims, int64(v))
		case num == tensorDataType && typ == protowire.VarintType:
			dataType = DataType(v)
		case num == tensorName && typ == protowire.BytesType:
			t.Name = string(val)
		case num == tensorRawData && typ == protowire.BytesType:
			raw = val
		case num == tensorExternalData && typ == protowire.BytesType:
			k, v, err := decodeEntry(val)
			ext[k] = v
			return err
		case num == tensorDataLocation && typ == protowire.VarintType:
			location = int64(v)
		default:
			return unexpected("TensorProto", num, typ)
		}
		return nil
	})
	if err != nil {
		return t, err
	}
	if location == locationExternal {
		if raw != nil {
			return t, fmt.Errorf("tensor %q is external and has raw_data", t.Name)
		}
		if raw, err = readExternal(dir, ext); err != nil {
			return t, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
	}
	switch dataType {
	case Float:
		if len(raw)%4 != 0 {
			return t, fmt.Errorf("tensor %q: %d raw bytes for float32", t.Name, len(raw))
		}
		t.Float32 = make([]float32, len(raw)/4)
		for i := range t.Float32 {
			t.Float32[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case Int64:
		if len(raw)%8 != 0 {
			return t, fmt.Errorf("tensor %q: %d raw bytes for int64", t.Name, len(raw))
		}
		t.Int64 = make([]int64, len(raw)/8)
		for i := range t.Int64 {
			t.Int64[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	default:
		return t, fmt.Errorf("tensor %q: data type %d", t.Name, dataType)
	}
	return t, nil
}

func readExternal(dir string, ext map[string]string) ([]byte, error) {
	off, err1 := strconv.ParseInt(ext["offset"], 10, 64)
	n, err2 := strconv.ParseInt(ext["length"], 10, 64)
	if err1 != nil || err2 != nil || len(ext) != 3 || ext["location"] == "" {
		return nil, fmt.Errorf("external_data %v: want location, offset and length", ext)
	}
	if off%externalAlign != 0 {
		return nil, fmt.Errorf("external data offset %d is not a multiple of %d", off, externalAlign)
	}
	b, err := os.ReadFile(filepath.Join(dir, ext["location"]))
	if err != nil {
		return nil, err
	}
	if off+n > int64(len(b)) {
		return nil, fmt.Errorf("external data [%d, %d) past the end of the %d-byte file", off, off+n, len(b))
	}
	return b[off : off+n], nil
}

func decodeValueInfo(b []byte) (ValueInfo, error) {
	var v ValueInfo
	err := eachField(b, func(num protowire.Number, typ protowire.Type, _ uint64, val []byte) error {
		switch {
		case num == valueInfoName && typ == protowire.BytesType:
			v.Name = string(val)
		case num == valueInfoType && typ == protowire.BytesType:
			return eachField(val, func(num protowire.Number, typ protowire.Type, _ uint64, val []byte) error {
				if num != typeTensorType || typ != protowire.BytesType {
					return unexpected("TypeProto", num, typ)
				}
				return decodeTensorType(val, &v)
			})
		default:
			return unexpected("ValueInfoProto", num, typ)
		}
		return nil
	})
	return v, err
}

func decodeTensorType(b []byte, v *ValueInfo) error {
	v.Dims = []Dim{}
	return eachField(b, func(num protowire.Number, typ protowire.Type, u uint64, val []byte) error {
		switch {
		case num == tensorElemType && typ == protowire.VarintType:
			v.Type = DataType(u)
		case num == tensorShape && typ == protowire.BytesType:
			return eachField(val, func(num protowire.Number, typ protowire.Type, _ uint64, val []byte) error {
				if num != shapeDim || typ != protowire.BytesType {
					return unexpected("TensorShapeProto", num, typ)
				}
				var d Dim
				err := eachField(val, func(num protowire.Number, typ protowire.Type, u uint64, val []byte) error {
					switch {
					case num == dimValue && typ == protowire.VarintType:
						d.Value = int64(u)
					case num == dimParam && typ == protowire.BytesType:
						d.Param = string(val)
					default:
						return unexpected("Dimension", num, typ)
					}
					return nil
				})
				v.Dims = append(v.Dims, d)
				return err
			})
		default:
			return unexpected("TypeProto.Tensor", num, typ)
		}
		return nil
	})
}
