package onnx

import (
	"bytes"
	"reflect"
	"testing"
)

// source hands out the fuzz input's bytes as small numbers and strings,
// and zeros once they run out.
type source struct{ b []byte }

func (s *source) byte() byte {
	if len(s.b) == 0 {
		return 0
	}
	v := s.b[0]
	s.b = s.b[1:]
	return v
}

func (s *source) int(n int) int { return int(s.byte()) % n }

func (s *source) name() string {
	n := s.int(6)
	b := make([]byte, n)
	for i := range b {
		b[i] = s.byte()
	}
	return string(b)
}

func (s *source) tensor(name string) Tensor {
	t := Tensor{Name: name}
	size := int64(1)
	for range s.int(4) {
		d := int64(s.int(5))
		t.Dims = append(t.Dims, d)
		size *= d
	}
	if s.int(2) == 0 {
		t.Int64 = make([]int64, size)
		for i := range t.Int64 {
			t.Int64[i] = int64(int8(s.byte())) << (s.int(8) * 8)
		}
		return t
	}
	t.Float32 = make([]float32, size)
	for i := range t.Float32 {
		t.Float32[i] = float32(int8(s.byte())) / 3
	}
	return t
}

func (s *source) attribute() Attribute {
	name := "a" + s.name()
	switch s.int(6) {
	case 0:
		return FloatAttr(name, float32(int8(s.byte()))/5)
	case 1:
		return IntAttr(name, -int64(s.byte())<<40)
	case 2:
		return StringAttr(name, s.name())
	case 3:
		return TensorAttr(name, s.tensor(s.name()))
	case 4:
		var v []float32
		for range s.int(4) {
			v = append(v, float32(s.byte()))
		}
		return FloatsAttr(name, v...)
	}
	var v []int64
	for range s.int(4) {
		v = append(v, int64(int8(s.byte())))
	}
	return IntsAttr(name, v...)
}

func (s *source) valueInfo(name string) ValueInfo {
	v := ValueInfo{Name: name, Type: Float, Dims: []Dim{}}
	if s.int(2) == 0 {
		v.Type = Int64
	}
	for range s.int(4) {
		if s.int(2) == 0 {
			v.Dims = append(v.Dims, Dim{Param: "p" + s.name()})
		} else {
			v.Dims = append(v.Dims, Dim{Value: int64(s.byte()) << s.int(40)})
		}
	}
	return v
}

// model builds a valid model from the fuzz input: a chain of nodes over
// distinct names.
func (s *source) model() *Model {
	m := &Model{ProducerName: s.name(), ProducerVersion: s.name(), Doc: s.name(), Opset: 1 + int64(s.byte())}
	for i := range s.int(3) {
		m.Metadata = append(m.Metadata, Property{string(rune('k'+i)) + s.name(), s.name()})
	}
	g := &m.Graph
	g.Name, g.Doc = s.name(), s.name()
	g.Inputs = []ValueInfo{s.valueInfo("in")}
	prev := "in"
	for i := range s.int(4) {
		t := s.tensor("w" + string(rune('0'+i)))
		g.Initializers = append(g.Initializers, t)
		n := Node{OpType: "Op" + s.name(), Name: s.name(), Inputs: []string{prev, "", t.Name}, Outputs: []string{"v" + string(rune('0'+i))}}
		for range s.int(3) {
			n.Attrs = append(n.Attrs, s.attribute())
		}
		g.Nodes = append(g.Nodes, n)
		prev = n.Outputs[0]
	}
	g.Outputs = []ValueInfo{s.valueInfo(prev)}
	return m
}

// FuzzWriteDecodes writes models built from the input and decodes them
// with the strict reader of decode_test.go: every model must come back
// field for field.
func FuzzWriteDecodes(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x03abc\x02\x01\x05\x03\x02\x01\x09\x08\x07\x06\x05\x04\x03\x02\x01\x00\x03\x01\x02"))
	f.Add(bytes.Repeat([]byte{0xff, 0x01, 0x80, 0x7f, 0x03}, 40))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := (&source{b: b}).model()
		if err := m.Validate(); err != nil {
			t.Fatalf("the generated model is invalid: %v", err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, m); err != nil {
			t.Fatal(err)
		}
		got, ir, err := decodeModel(buf.Bytes(), "")
		if err != nil || ir != IRVersion {
			t.Fatalf("decoding: %v (ir_version %d)", err, ir)
		}
		if want := canonical(m); !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded\n%+v\nwant\n%+v", got, want)
		}
	})
}
