package onnx

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sample is a model with every kind of field the package writes.
func sample() *Model {
	w := make([]float32, 4*3*2*2)
	for i := range w {
		w[i] = float32(i)*0.25 - 3
	}
	big := make([]float32, 600) // 2400 bytes: external when there is a data file
	for i := range big {
		big[i] = float32(i) / 7
	}
	return &Model{
		ProducerName: "vit-train", ProducerVersion: "test", Doc: "a model", Opset: 17,
		Metadata: []Property{{"mean", "[0.5]"}, {"empty", ""}, {"unicode", "×²"}},
		Graph: Graph{
			Name: "g", Doc: "the graph",
			Inputs:  []ValueInfo{{Name: "pixel_values", Type: Float, Dims: []Dim{{Param: "batch"}, {Value: 3}, {Value: 4}, {Value: 4}}}},
			Outputs: []ValueInfo{{Name: "logits", Type: Float, Dims: []Dim{{Param: "batch"}, {Value: 600}}}},
			Initializers: []Tensor{
				{Name: "conv.weight", Dims: []int64{4, 3, 2, 2}, Float32: w},
				{Name: "shape", Dims: []int64{2}, Int64: []int64{0, -1}},
				{Name: "scalar", Float32: []float32{0.5}},
				{Name: "empty", Dims: []int64{0}, Int64: []int64{}},
				{Name: "bias", Dims: []int64{600}, Float32: big},
			},
			Nodes: []Node{
				{OpType: "Conv", Name: "conv", Inputs: []string{"pixel_values", "conv.weight", ""}, Outputs: []string{"c"},
					Attrs: []Attribute{IntsAttr("strides", 2, 2), IntsAttr("pads"), IntAttr("group", 1), StringAttr("auto_pad", "NOTSET")}},
				{OpType: "Reshape", Inputs: []string{"c", "shape"}, Outputs: []string{"r"}},
				{OpType: "Mul", Inputs: []string{"r", "scalar"}, Outputs: []string{"m"}},
				{OpType: "Constant", Outputs: []string{"k"}, Attrs: []Attribute{TensorAttr("value", Tensor{Name: "k", Dims: []int64{1}, Float32: []float32{-2}})}},
				{OpType: "LayerNormalization", Inputs: []string{"m", "k", "k"}, Outputs: []string{"n"},
					Attrs: []Attribute{FloatAttr("epsilon", 1e-6), IntAttr("axis", -1), FloatsAttr("unused", 1, -0.5)}},
				{OpType: "Add", Inputs: []string{"n", "bias"}, Outputs: []string{"logits"}},
			},
		},
	}
}

// canonical fills what decoding cannot tell apart from its absence: an
// empty float tensor decodes with a non-nil slice, a value's dimensions as
// an empty list.
func canonical(m *Model) *Model {
	c := *m
	c.Graph.Initializers = append([]Tensor(nil), m.Graph.Initializers...)
	for i := range c.Graph.Initializers {
		t := &c.Graph.Initializers[i]
		if t.Int64 == nil && t.Float32 == nil {
			t.Float32 = []float32{}
		}
	}
	for _, vs := range []*[]ValueInfo{&c.Graph.Inputs, &c.Graph.Outputs} {
		*vs = append([]ValueInfo(nil), (*vs)...)
		for i := range *vs {
			if (*vs)[i].Dims == nil {
				(*vs)[i].Dims = []Dim{}
			}
		}
	}
	return &c
}

func roundTrip(t *testing.T, m *Model) *Model {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, m); err != nil {
		t.Fatal(err)
	}
	got, ir, err := decodeModel(buf.Bytes(), "")
	if err != nil {
		t.Fatalf("decoding what Write wrote: %v", err)
	}
	if ir != IRVersion {
		t.Fatalf("ir_version %d, want %d", ir, IRVersion)
	}
	return got
}

func TestWriteDecodesToTheSameModel(t *testing.T) {
	m := sample()
	if got := roundTrip(t, m); !reflect.DeepEqual(got, canonical(m)) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, canonical(m))
	}
}

// TestEncodingOfAValueInfo checks one message byte by byte against the
// encoding worked out by hand from onnx.proto's field numbers.
func TestEncodingOfAValueInfo(t *testing.T) {
	got := encodeValueInfo(&ValueInfo{Name: "x", Type: Float, Dims: []Dim{{Param: "b"}, {Value: 3}}})
	var buf bytes.Buffer
	if err := got.writeTo(&buf); err != nil {
		t.Fatal(err)
	}
	want := []byte{
		0x0a, 1, 'x', // name = 1
		0x12, 15, // type = 2 (TypeProto)
		0x0a, 13, // tensor_type = 1
		0x08, 1, // elem_type = 1: FLOAT
		0x12, 9, // shape = 2
		0x0a, 3, 0x12, 1, 'b', // dim = 1 { dim_param = 2 }
		0x0a, 2, 0x08, 3, // dim = 1 { dim_value = 1 }
	}
	if !bytes.Equal(buf.Bytes(), want) || got.size != int64(len(want)) {
		t.Fatalf("encoded % x (size %d), want % x", buf.Bytes(), got.size, want)
	}
}

func TestWriteFileWithExternalData(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.onnx")
	m := sample()
	if err := WriteFile(path, m, "m.onnx.data"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := decodeModel(b, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, canonical(m)) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, canonical(m))
	}
	data, err := os.Stat(filepath.Join(dir, "m.onnx.data"))
	if err != nil {
		t.Fatal(err)
	}
	// Only "bias" (2400 bytes) is over the 1 KiB threshold: it is the first
	// and only tensor in the data file, at offset 0.
	if data.Size() != 2400 || int64(len(b)) > 1500 {
		t.Fatalf("data file %d bytes (want 2400), model %d bytes", data.Size(), len(b))
	}
	inline := filepath.Join(dir, "inline.onnx")
	if err := WriteFile(inline, m, ""); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(inline); err != nil || st.Size() < 2400 {
		t.Fatalf("inline model: %v %v", st, err)
	}
	for _, bad := range []string{"sub/x.data", "..", "m.onnx"} {
		if err := WriteFile(path, m, bad); err == nil || !strings.Contains(err.Error(), "external data file") {
			t.Errorf("external %q: %v", bad, err)
		}
	}
}

func TestValidateNamesTheProblem(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(m *Model)
		want  string
	}{
		{"no opset", func(m *Model) { m.Opset = 0 }, "opset 0"},
		{"duplicate key", func(m *Model) { m.Metadata = append(m.Metadata, Property{"mean", "x"}) }, `metadata key "mean" appears twice`},
		{"undefined input", func(m *Model) { m.Graph.Nodes[1].Inputs[1] = "nope" }, `node 1 (Reshape "") reads "nope"`},
		{"order", func(m *Model) { m.Graph.Nodes[0], m.Graph.Nodes[1] = m.Graph.Nodes[1], m.Graph.Nodes[0] }, `reads "c"`},
		{"defined twice", func(m *Model) { m.Graph.Nodes[2].Outputs[0] = "r" }, `value "r" is defined twice`},
		{"initializer shadows input", func(m *Model) { m.Graph.Initializers[0].Name = "pixel_values" }, `value "pixel_values" is defined twice (graph input and initializer)`},
		{"short tensor", func(m *Model) { m.Graph.Initializers[0].Float32 = m.Graph.Initializers[0].Float32[1:] }, `tensor "conv.weight" has dimensions [4 3 2 2] (48 values) but holds 47 float32 values`},
		{"both types", func(m *Model) { m.Graph.Initializers[2].Int64 = []int64{1} }, "both float32 and int64"},
		{"output not computed", func(m *Model) { m.Graph.Outputs[0].Name = "y" }, `output "y" is not computed`},
		{"no outputs", func(m *Model) { m.Graph.Outputs = nil }, "has no outputs"},
		{"attribute type", func(m *Model) { m.Graph.Nodes[0].Attrs[0].Type = 9 }, `attribute "strides" has type 9`},
		{"no op", func(m *Model) { m.Graph.Nodes[2].OpType = "" }, "has no op type"},
		{"bad dim", func(m *Model) { m.Graph.Inputs[0].Dims[1].Value = -1 }, "dimension 1 is -1"},
	} {
		m := sample()
		c.spoil(m)
		err := Write(&bytes.Buffer{}, m)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
