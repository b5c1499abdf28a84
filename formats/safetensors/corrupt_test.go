package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawFile assembles a file from a header string and data, with the header
// length field set to len(header).
func rawFile(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

func TestReadRejectsCorruptHeaders(t *testing.T) {
	eight := make([]byte, 8)
	for _, tc := range []struct {
		name   string
		file   []byte
		errHas []string // all must appear in the error
	}{
		{"empty file", nil, []string{"header length", "0 bytes"}},
		{"short file", []byte{1, 2, 3}, []string{"header length", "3 bytes"}},
		{"header past end", append(binary.LittleEndian.AppendUint64(nil, 100), "{}"...), []string{"header length", "100 bytes", "truncated"}},
		{"huge header", binary.LittleEndian.AppendUint64(nil, 1<<40), []string{"not a safetensors file", "header length", "exceeds"}},
		{"text", []byte("model: vit_fmnist_patch4_28\n"), []string{"not a safetensors file", "header length"}},
		{"short length, no JSON", append(binary.LittleEndian.AppendUint64(nil, 100), "PK\x03\x04"...), []string{"not a safetensors file", "100 bytes", "'{'"}},
		{"zero header length", make([]byte, 8), []string{"header", "'{'"}},
		{"not JSON", rawFile("hello!!!", nil), []string{"header", "'{'"}},
		{"leading space", rawFile(" {}", nil), []string{"header", "'{'"}},
		{"invalid UTF-8", rawFile("{\"\xff\":1}", nil), []string{"UTF-8"}},
		{"unterminated", rawFile(`{"a":{"dtype":"F32"`, nil), []string{`tensor "a"`, "invalid JSON"}},
		{"trailing garbage", rawFile(`{}  x`, nil), []string{"after the JSON object"}},
		{"two objects", rawFile(`{}{}`, nil), []string{"after the JSON object"}},
		{"tensor not object", rawFile(`{"a":[1]}`, nil), []string{`tensor "a"`, `want "{"`}},
		{"unknown dtype", rawFile(`{"a":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}}`, eight), []string{`tensor "a"`, "dtype", `"F33"`}},
		{"dtype not string", rawFile(`{"a":{"dtype":4,"shape":[2],"data_offsets":[0,8]}}`, eight), []string{`tensor "a"`, "dtype", "number 4"}},
		{"negative dim", rawFile(`{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, eight), []string{`tensor "a"`, "shape", "-2"}},
		{"fractional dim", rawFile(`{"a":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}`, eight), []string{`tensor "a"`, "shape", "2.0"}},
		{"string dim", rawFile(`{"a":{"dtype":"F32","shape":["2"],"data_offsets":[0,8]}}`, eight), []string{`tensor "a"`, "shape", `string "2"`}},
		{"huge dim", rawFile(`{"a":{"dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,8]}}`, eight), []string{`tensor "a"`, "shape", "99999999999999999999"}},
		{"overflowing shape", rawFile(`{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}}`, eight), []string{`tensor "a"`, "shape", "overflows"}},
		{"one offset", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[8]}}`, eight), []string{`tensor "a"`, "data_offsets", "[8]"}},
		{"reversed offsets", rawFile(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}`, eight), []string{`tensor "a"`, "data_offsets", "[8, 0]"}},
		{"size mismatch", rawFile(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, eight), []string{`tensor "a"`, "data_offsets", "spans 8 bytes", "needs 12"}},
		{"past end", rawFile(`{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, eight), []string{`tensor "a"`, "data_offsets", "past the 8-byte data buffer"}},
		{"hole at start", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, eight), []string{`tensor "a"`, "hole of 4 bytes", "start"}},
		{"hole between", rawFile(`{"a":{"dtype":"F16","shape":[1],"data_offsets":[0,2]},"b":{"dtype":"F16","shape":[1],"data_offsets":[4,6]}}`, eight[:6]), []string{`tensor "b"`, "hole of 2 bytes", `tensor "a"`}},
		{"overlap", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, eight), []string{`tensor "b"`, "overlaps", `tensor "a"`}},
		{"trailing data", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, eight), []string{"cover 4 bytes", "has 8"}},
		{"duplicate tensor", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, eight), []string{`tensor "a"`, "twice"}},
		{"duplicate field", rawFile(`{"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, eight), []string{`tensor "a"`, "dtype", "twice"}},
		{"unknown field", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}}`, eight), []string{`tensor "a"`, `unknown field "x"`}},
		{"missing shape", rawFile(`{"a":{"dtype":"F32","data_offsets":[0,8]}}`, eight), []string{`tensor "a"`, "shape", "missing"}},
		{"metadata not object", rawFile(`{"__metadata__":"x"}`, nil), []string{"__metadata__", `string "x"`}},
		{"metadata number", rawFile(`{"__metadata__":{"k":1}}`, nil), []string{"__metadata__", `"k"`, "number 1"}},
		{"metadata nested", rawFile(`{"__metadata__":{"k":{"a":"b"}}}`, nil), []string{"__metadata__", `"k"`}},
		{"metadata duplicate", rawFile(`{"__metadata__":{"k":"a","k":"b"}}`, nil), []string{"__metadata__", `"k"`, "twice"}},
		{"empty name", rawFile(`{"":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, eight), []string{"empty tensor name"}},
		{"integer tensor", rawFile(`{"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}`, eight), []string{`tensor "a"`, "dtype", "I64 cannot be converted"}},
	} {
		_, err := Read(bytes.NewReader(tc.file), int64(len(tc.file)))
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		t.Logf("%s: %v", tc.name, err)
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %T %v, want a *FormatError", tc.name, err, err)
		}
		for _, s := range tc.errHas {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not mention %q", tc.name, err, s)
			}
		}
	}
}

func TestReadAcceptsSpecVariants(t *testing.T) {
	for name, file := range map[string][]byte{
		"no tensors":           rawFile(`{}`, nil),
		"whitespace padding":   rawFile("{} \t\r\n", nil),
		"pretty JSON":          rawFile("{\n \"a\" : { \"shape\" : [ 1 ] , \"data_offsets\" : [0,4], \"dtype\":\"F32\" }\n}", []byte{0, 0, 0x80, 0x3f}),
		"unsorted offsets":     rawFile(`{"b":{"dtype":"F16","shape":[1],"data_offsets":[2,4]},"a":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}`, []byte{0, 0x3c, 0, 0xc0}),
		"zero-size anywhere":   rawFile(`{"z":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}`, []byte{0, 0, 0x80, 0x3f}),
		"empty metadata":       rawFile(`{"__metadata__":{}}`, nil),
		"metadata with escape": rawFile(`{"__metadata__":{"k\u00e9":"\"v\""}}`, nil),
	} {
		if _, err := Read(bytes.NewReader(file), int64(len(file))); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	unsorted := rawFile(`{"b":{"dtype":"F16","shape":[1],"data_offsets":[2,4]},"a":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}`, []byte{0, 0x3c, 0, 0xc0})
	f, err := Read(bytes.NewReader(unsorted), int64(len(unsorted)))
	if err != nil || f.Tensors[0].Name != "a" || f.Tensors[0].Data[0] != 1 || f.Tensors[1].Data[0] != -2 {
		t.Errorf("unsorted offsets read as %+v", f.Tensors)
	}
}

// TestReadTruncated cuts the golden file at every length: only the whole
// file may be accepted.
func TestReadTruncated(t *testing.T) {
	for n := range len(goldenFile) {
		if _, err := Read(bytes.NewReader(goldenFile[:n]), int64(n)); err == nil {
			t.Fatalf("file truncated to %d of %d bytes accepted", n, len(goldenFile))
		}
	}
	// A size that claims more than the reader has fails on the read itself.
	_, err := Read(bytes.NewReader(goldenFile[:len(goldenFile)-2]), int64(len(goldenFile)))
	if err == nil || !strings.Contains(err.Error(), `tensor "h"`) {
		t.Fatalf("short reader: %v, want an error naming tensor h", err)
	}
}

func TestReadFileErrorsNameTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.safetensors")
	if err := os.WriteFile(path, rawFile(`{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, make([]byte, 8)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(path)
	for _, s := range []string{path, `tensor "w"`, "data_offsets", "[0, 8]", "needs 12"} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("error %v does not mention %q", err, s)
		}
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing file accepted")
	}
}
