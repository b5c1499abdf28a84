package safetensors

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	big := make([]float32, 3*encodeChunk+5) // several conversion chunks
	for i := range big {
		big[i] = Float16ToFloat32(Float32ToFloat16(float32(rng.NormFloat64())))
	}
	bf := make([]float32, 1000)
	for i := range bf {
		bf[i] = BFloat16ToFloat32(Float32ToBFloat16(float32(rng.NormFloat64() * 1e10)))
	}
	in := []Tensor{
		{Name: "blocks.0.attn.qkv.weight", Shape: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5, float32(math.Inf(-1))}},
		{Name: "scalar", Shape: []int{}, Data: []float32{42}},
		{Name: "empty", Shape: []int{0, 5}, Data: []float32{}},
		{Name: "also empty", DType: F16, Shape: []int{3, 0}, Data: nil},
		{Name: "half", DType: F16, Shape: []int{len(big)}, Data: big},
		{Name: "brain", DType: BF16, Shape: []int{10, 100}, Data: bf},
		{Name: "double", DType: F64, Shape: []int{2}, Data: []float32{math.SmallestNonzeroFloat32, -math.MaxFloat32}},
		{Name: "quote\"back\\slash\nnewline\x01ctl ünï", Shape: []int{1}, Data: []float32{-0.25}},
	}
	md := map[string]string{"format": "pt", "epoch": "3", "odd\tkey": "val\"ue\u2028"}
	var buf bytes.Buffer
	if err := Write(&buf, in, md); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	if n := binary.LittleEndian.Uint64(raw); n%8 != 0 {
		t.Fatalf("header length %d is not a multiple of 8", n)
	}
	f, err := Read(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Metadata) != len(md) {
		t.Fatalf("metadata %v, want %v", f.Metadata, md)
	}
	for k, v := range md {
		if f.Metadata[k] != v {
			t.Errorf("metadata[%q] = %q, want %q", k, f.Metadata[k], v)
		}
	}
	// File order: F64, F32 (by name), BF16, F16 (by name).
	wantOrder := []string{"double", "blocks.0.attn.qkv.weight", "empty", "quote\"back\\slash\nnewline\x01ctl ünï", "scalar", "brain", "also empty", "half"}
	for i, name := range wantOrder {
		if f.Tensors[i].Name != name {
			t.Fatalf("tensor %d is %q, want %q", i, f.Tensors[i].Name, name)
		}
	}
	for _, w := range in {
		g, ok := f.Get(w.Name)
		if !ok {
			t.Fatalf("tensor %q missing", w.Name)
		}
		if len(g.Shape) != len(w.Shape) || len(g.Data) != len(w.Data) || dtypeOf(w) != g.DType {
			t.Fatalf("%q: got %v %v len %d, want %v %v len %d", w.Name, g.DType, g.Shape, len(g.Data), dtypeOf(w), w.Shape, len(w.Data))
		}
		for i := range w.Data {
			if math.Float32bits(g.Data[i]) != math.Float32bits(w.Data[i]) {
				t.Fatalf("%q[%d] = %g, want %g", w.Name, i, g.Data[i], w.Data[i])
			}
		}
	}
}

func TestWriteRejectsBadTensors(t *testing.T) {
	ok := Tensor{Name: "a", Shape: []int{1}, Data: []float32{1}}
	for name, tc := range map[string]struct {
		tensors []Tensor
		md      map[string]string
	}{
		"shape mismatch":  {[]Tensor{{Name: "a", Shape: []int{2}, Data: []float32{1}}}, nil},
		"negative dim":    {[]Tensor{{Name: "a", Shape: []int{-1, -1}, Data: []float32{1}}}, nil},
		"duplicate":       {[]Tensor{ok, ok}, nil},
		"empty name":      {[]Tensor{{Shape: []int{1}, Data: []float32{1}}}, nil},
		"reserved name":   {[]Tensor{{Name: "__metadata__", Shape: []int{1}, Data: []float32{1}}}, nil},
		"bad UTF-8 name":  {[]Tensor{{Name: "\xff", Shape: []int{1}, Data: []float32{1}}}, nil},
		"integer dtype":   {[]Tensor{{Name: "a", DType: I64, Shape: []int{1}, Data: []float32{1}}}, nil},
		"unknown dtype":   {[]Tensor{{Name: "a", DType: "F128", Shape: []int{1}, Data: []float32{1}}}, nil},
		"bad UTF-8 value": {[]Tensor{ok}, map[string]string{"k": "\xfe"}},
	} {
		var buf bytes.Buffer
		err := Write(&buf, tc.tensors, tc.md)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if buf.Len() != 0 {
			t.Errorf("%s: wrote %d bytes before failing", name, buf.Len())
		}
		t.Logf("%s: %v", name, err)
	}
}
