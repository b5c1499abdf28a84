package safetensors

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// goldenHeader is the header of goldenFile, written out per the format:
// metadata first, then tensors by dtype width (F32 before F16) and name.
const goldenHeader = `{"__metadata__":{"format":"pt"},` +
	`"bias":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},` +
	`"weight":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},` +
	`"h":{"dtype":"F16","shape":[2],"data_offsets":[12,16]}}`

// goldenFile is built byte by byte: the 202-byte header padded with 6
// spaces to 208 = 0xd0 bytes, then the little-endian data.
var goldenFile = slices.Concat(
	[]byte{0xd0, 0, 0, 0, 0, 0, 0, 0},
	[]byte(goldenHeader), []byte("      "),
	[]byte{0x00, 0x00, 0x00, 0x3f}, // bias   = 0.5   (0x3f000000)
	[]byte{0x00, 0x00, 0x80, 0x3f}, // weight = 1.0   (0x3f800000)
	[]byte{0x00, 0x00, 0x00, 0xc0}, //          −2.0  (0xc0000000)
	[]byte{0x00, 0x3c},             // h      = 1.0   (half 0x3c00)
	[]byte{0xff, 0x7b},             //          65504 (half 0x7bff)
)

func goldenTensors() []Tensor {
	return []Tensor{
		{Name: "weight", Shape: []int{2}, Data: []float32{1, -2}},
		{Name: "h", DType: F16, Shape: []int{2}, Data: []float32{1, 65504}},
		{Name: "bias", DType: F32, Shape: []int{1}, Data: []float32{0.5}},
	}
}

// TestGoldenWrite checks Write against goldenFile with the checksum entry
// added to its metadata, the checksums computed by a bitwise CRC-32C.
func TestGoldenWrite(t *testing.T) {
	if len(goldenHeader) != 202 {
		t.Fatalf("golden header is %d bytes, the fixture assumes 202", len(goldenHeader))
	}
	data := goldenFile[216:]
	sums := fmt.Sprintf(`{\"__metadata__\":\"%08x\",\"bias\":\"%08x\",\"h\":\"%08x\",\"weight\":\"%08x\"}`,
		crc32cBitwise([]byte("\x06format\x02pt"+ // metadata
			"\x04bias\x03F32\x01\x01\x00\x04"+ // name, dtype, rank, shape, begin, end
			"\x01h\x03F16\x01\x02\x0c\x10"+
			"\x06weight\x03F32\x01\x02\x04\x0c")),
		crc32cBitwise(data[:4]), crc32cBitwise(data[12:16]), crc32cBitwise(data[4:12]))
	header := strings.Replace(goldenHeader, `{"__metadata__":{`, `{"__metadata__":{"crc32c":"`+sums+`",`, 1)
	for len(header)%8 != 0 {
		header += " "
	}
	want := slices.Concat(binary.LittleEndian.AppendUint64(nil, uint64(len(header))), []byte(header), data)
	var buf bytes.Buffer
	if err := Write(&buf, goldenTensors(), map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("written bytes differ from the golden file:\n got %q\nwant %q", buf.Bytes(), want)
	}
}

func TestGoldenRead(t *testing.T) {
	f, err := Read(bytes.NewReader(goldenFile), int64(len(goldenFile)))
	if err != nil {
		t.Fatal(err)
	}
	if f.Metadata["format"] != "pt" || len(f.Metadata) != 1 {
		t.Fatalf("metadata %v", f.Metadata)
	}
	want := []Tensor{
		{Name: "bias", DType: F32, Shape: []int{1}, Data: []float32{0.5}},
		{Name: "weight", DType: F32, Shape: []int{2}, Data: []float32{1, -2}},
		{Name: "h", DType: F16, Shape: []int{2}, Data: []float32{1, 65504}},
	}
	assertTensors(t, f.Tensors, want)
	h, err := ReadHeader(bytes.NewReader(goldenFile), int64(len(goldenFile)))
	if err != nil {
		t.Fatal(err)
	}
	if h.DataStart != 216 || h.Tensors[2].Begin != 12 || h.Tensors[2].End != 16 {
		t.Fatalf("header %+v", h)
	}
	if got, ok := f.Get("weight"); !ok || got.Data[1] != -2 {
		t.Fatalf("Get(weight) = %+v, %v", got, ok)
	}
	if _, ok := f.Get("nope"); ok {
		t.Fatal("Get(nope) found something")
	}
}

func assertTensors(t *testing.T, got, want []Tensor) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d tensors, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Name != w.Name || g.DType != w.DType || !slices.Equal(g.Shape, w.Shape) || !slices.Equal(g.Data, w.Data) {
			t.Errorf("tensor %d = %+v, want %+v", i, g, w)
		}
	}
}
