package safetensors

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"
)

// FuzzRead checks that Read never panics, reports malformed input as a
// *FormatError, and that whatever it accepts survives Write and Read
// unchanged.
func FuzzRead(f *testing.F) {
	f.Add(goldenFile)
	f.Add(rawFile(`{}`, nil))
	var checked bytes.Buffer
	if err := Write(&checked, []Tensor{{Name: "w", DType: F16, Shape: []int{2}, Data: []float32{1, 2}}, {Name: "z", Shape: []int{0}}}, map[string]string{"k": "v"}); err != nil {
		f.Fatal(err)
	}
	f.Add(checked.Bytes())
	f.Add(rawFile(`{"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"F64","shape":[],"data_offsets":[4,12]}}`, make([]byte, 12)))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("%T %v, want a *FormatError", err, err)
			}
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, file.Tensors, file.Metadata); err != nil {
			t.Fatalf("rewriting an accepted file: %v", err)
		}
		again, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatalf("reading a rewritten file: %v", err)
		}
		if len(again.Metadata) != len(file.Metadata) {
			t.Fatalf("metadata %v became %v", file.Metadata, again.Metadata)
		}
		for k, v := range file.Metadata {
			if again.Metadata[k] != v {
				t.Fatalf("metadata[%q] %q became %q", k, v, again.Metadata[k])
			}
		}
		if len(again.Tensors) != len(file.Tensors) {
			t.Fatalf("%d tensors became %d", len(file.Tensors), len(again.Tensors))
		}
		for _, want := range file.Tensors {
			got, ok := again.Get(want.Name)
			if !ok || got.DType != want.DType || !slices.Equal(got.Shape, want.Shape) || len(got.Data) != len(want.Data) {
				t.Fatalf("tensor %q: %+v became %+v", want.Name, want, got)
			}
			for i := range want.Data {
				a, b := want.Data[i], got.Data[i]
				if math.Float32bits(a) != math.Float32bits(b) && !(a != a && b != b) {
					t.Fatalf("tensor %q[%d]: %g became %g", want.Name, i, a, b)
				}
			}
		}
	})
}

var halfTable = sync.OnceValues(func() ([]float64, []uint16) {
	var values []float64
	var codes []uint16
	for h := uint16(0); h < 0x7c00; h++ {
		values = append(values, float64(Float16ToFloat32(h)))
		codes = append(codes, h)
	}
	return values, codes
})

// FuzzFloat16 checks both roundings of any float32 against a search over
// the representable values.
func FuzzFloat16(f *testing.F) {
	for _, v := range []float32{1, -2, 65504, 65520, 0x1p-25, 0x1.8p-25, 1 + 0x1p-8, float32(math.Inf(1))} {
		f.Add(math.Float32bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint32) {
		x := math.Float32frombits(bits)
		h, b := Float32ToFloat16(x), Float32ToBFloat16(x)
		if x != x {
			if h&0x7fff != 0x7e00 || b != 0x7fc0 {
				t.Fatalf("NaN %#08x → half %#04x, bfloat16 %#04x", bits, h, b)
			}
			return
		}
		values, codes := halfTable()
		sign := uint16(bits>>16) & 0x8000
		if want := sign | nearestHalf(math.Abs(float64(x)), values, codes); h != want {
			t.Fatalf("Float32ToFloat16(%g) = %#04x, want %#04x", x, h, want)
		}
		if want := nearestBFloat16(x); b != want {
			t.Fatalf("Float32ToBFloat16(%g) = %#04x, want %#04x", x, b, want)
		}
	})
}

// nearestBFloat16 picks between the two bfloat16 values around x by
// comparing distances in float64 (Inf counting as 2^128), ties to even.
func nearestBFloat16(x float32) uint16 {
	lo := uint16(math.Float32bits(x) >> 16)
	hi := lo + 1
	val := func(c uint16) float64 {
		if c&0x7fff == 0x7f80 {
			return math.Copysign(0x1p128, float64(x))
		}
		return float64(BFloat16ToFloat32(c))
	}
	dLo, dHi := math.Abs(float64(x)-val(lo)), math.Abs(val(hi)-float64(x))
	switch {
	case dLo < dHi:
		return lo
	case dHi < dLo:
		return hi
	case lo%2 == 0:
		return lo
	}
	return hi
}
