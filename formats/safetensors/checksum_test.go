package safetensors

import (
	"bytes"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crc32cBitwise is CRC-32C computed bit by bit from its definition
// (reflected polynomial 0x82f63b78), independent of hash/crc32.
func crc32cBitwise(b []byte) uint32 {
	crc := ^uint32(0)
	for _, c := range b {
		crc ^= uint32(c)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0x82f63b78
			} else {
				crc >>= 1
			}
		}
	}
	return ^crc
}

func TestCRC32C(t *testing.T) {
	// The standard check value of CRC-32C.
	if got := crc32cBitwise([]byte("123456789")); got != 0xe3069283 {
		t.Fatalf("bitwise CRC-32C check value %08x", got)
	}
	if got := crc32.Checksum([]byte("123456789"), castagnoli); got != 0xe3069283 {
		t.Fatalf("CRC-32C check value %08x", got)
	}
}

// checkedTensors is a small checkpoint with every float dtype.
func checkedTensors() []Tensor {
	return []Tensor{
		{Name: "blocks.0.attn.qkv.weight", Shape: []int{2, 3}, Data: []float32{1, -2, 3.5, 0, 1e-3, -7}},
		{Name: "half", DType: F16, Shape: []int{3}, Data: []float32{1, 0.5, -65504}},
		{Name: "brain", DType: BF16, Shape: []int{2}, Data: []float32{2, -0.25}},
		{Name: "wide", DType: F64, Shape: []int{}, Data: []float32{3}},
		{Name: "empty", Shape: []int{0, 4}, Data: nil},
	}
}

func writeChecked(t *testing.T, path string) []byte {
	t.Helper()
	if err := WriteFileAtomic(path, checkedTensors(), map[string]string{"vit_train.state": `{"epoch":5}`, "format": "pt"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestChecksumsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ck.safetensors")
	writeChecked(t, path)
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Metadata[ChecksumKey]; ok || len(f.Metadata) != 2 {
		t.Errorf("metadata %v, want the two entries written, without %q", f.Metadata, ChecksumKey)
	}
	h, err := readHeaderFile(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Checksums) != len(checkedTensors()) {
		t.Errorf("header checksums %v", h.Checksums)
	}
	var buf []byte
	for _, want := range checkedTensors() {
		if got := h.Checksums[want.Name]; got != tensorChecksum(want, &buf) {
			t.Errorf("tensor %q: checksum %08x", want.Name, got)
		}
	}
	// Metadata may not set the key itself, nor look like a checksum map.
	err = Write(&bytes.Buffer{}, checkedTensors(), map[string]string{ChecksumKey: "{}"})
	if err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("writing metadata with %q: %v", ChecksumKey, err)
	}
	err = Write(&bytes.Buffer{}, checkedTensors(), map[string]string{"x": `{"__metadata__":"00000000"}`})
	if err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("writing metadata that looks like checksums: %v", err)
	}
}

func readHeaderFile(t *testing.T, path string) (*Header, error) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return ReadHeader(bytes.NewReader(b), int64(len(b)))
}

// Every single-bit flip in a tensor's bytes is an error naming the tensor
// and the file.
func TestChecksumsCatchDataBitFlips(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ck.safetensors")
	orig := writeChecked(t, path)
	h, err := ReadHeader(bytes.NewReader(orig), int64(len(orig)))
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "flipped.safetensors")
	for _, info := range h.Tensors {
		for off := info.Begin; off < info.End; off++ {
			for bit := range 8 {
				b := bytes.Clone(orig)
				b[h.DataStart+off] ^= 1 << bit
				if err := os.WriteFile(bad, b, 0o644); err != nil {
					t.Fatal(err)
				}
				_, err := ReadFile(bad)
				var fe *FormatError
				if !errors.As(err, &fe) || fe.Tensor != info.Name || fe.File != bad || fe.Field != "data" || !strings.Contains(err.Error(), "corrupt") {
					t.Fatalf("bit %d of byte %d of tensor %q flipped: %v, want a *FormatError naming the tensor and %s", bit, off, info.Name, err, bad)
				}
				// The header alone is intact.
				if _, err := ReadHeader(bytes.NewReader(b), int64(len(b))); err != nil {
					t.Fatalf("ReadHeader after a data flip: %v", err)
				}
			}
		}
	}
}

// Every single-bit flip in the header — length field, JSON, metadata,
// names, checksums, padding — is an error.
func TestChecksumsCatchHeaderBitFlips(t *testing.T) {
	orig := writeChecked(t, filepath.Join(t.TempDir(), "ck.safetensors"))
	h, err := ReadHeader(bytes.NewReader(orig), int64(len(orig)))
	if err != nil {
		t.Fatal(err)
	}
	for off := range h.DataStart {
		for bit := range 8 {
			b := bytes.Clone(orig)
			b[off] ^= 1 << bit
			f, err := Read(bytes.NewReader(b), int64(len(b)))
			if err == nil {
				t.Fatalf("bit %d of header byte %d (%q → %q) flipped: accepted, metadata %v", bit, off, orig[off], b[off], f.Metadata)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("bit %d of header byte %d: %T %v, want a *FormatError", bit, off, err, err)
			}
		}
	}
}

// A file's checksums are corrupted in the ways a damaged or hand-edited
// header would be.
func TestChecksumsMalformed(t *testing.T) {
	const tensor = `"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}`
	data := []byte{0, 0, 0x80, 0x3f}
	sumA := crc32cBitwise(data)
	sumMeta := headerChecksum(nil, []TensorInfo{{Name: "a", DType: F32, Shape: []int{1}, Begin: 0, End: 4}})
	hex := func(v uint32) string { return string(appendHex(nil, v)) }
	file := func(sums string, extra ...string) []byte {
		md := `"crc32c":` + quoteJSON(sums)
		for _, e := range extra {
			md += "," + e
		}
		return rawFile(`{"__metadata__":{`+md+`},`+tensor+`}`, data)
	}
	good := `{"__metadata__":"` + hex(sumMeta) + `","a":"` + hex(sumA) + `"}`
	if _, err := Read(bytes.NewReader(file(good)), int64(len(file(good)))); err != nil {
		t.Fatalf("well-formed checksums: %v", err)
	}
	for _, tc := range []struct {
		name string
		file []byte
		want []string
	}{
		{"entry for a missing tensor", file(`{"__metadata__":"` + hex(sumMeta) + `","a":"` + hex(sumA) + `","b":"00000000"}`), []string{`checksum for tensor "b"`, "does not hold"}},
		{"tensor without entry", file(`{"__metadata__":"` + hex(sumMeta) + `"}`), []string{`tensor "a"`, "no checksum for this tensor"}},
		{"no header entry", file(`{"a":"` + hex(sumA) + `"}`), []string{`no "__metadata__" entry`}},
		{"renamed checksum key", rawFile(`{"__metadata__":{"brc32c":`+quoteJSON(good)+`},`+tensor+`}`, data), []string{`entry "brc32c" holds checksums`}},
		{"metadata changed", file(good, `"epoch":"5"`), []string{"header", "metadata and tensor descriptions", "corrupt"}},
		{"wrong tensor checksum", file(`{"__metadata__":"` + hex(sumMeta) + `","a":"` + hex(sumA^1) + `"}`), []string{`tensor "a"`, "data", hex(sumA), hex(sumA ^ 1), "corrupt"}},
		{"not JSON", file(`nope`), []string{`"crc32c"`, "not a JSON object"}},
		{"not an object", file(`["a"]`), []string{`"crc32c"`, `want a JSON object`}},
		{"number value", file(`{"__metadata__":"` + hex(sumMeta) + `","a":12}`), []string{`checksum of "a" is number 12`}},
		{"upper case", file(`{"__metadata__":"` + hex(sumMeta) + `","a":"` + strings.ToUpper(hex(sumA)) + `"}`), []string{`checksum of "a"`, "lowercase hex"}},
		{"seven digits", file(`{"__metadata__":"` + hex(sumMeta) + `","a":"` + hex(sumA)[1:] + `"}`), []string{`checksum of "a"`, "8 lowercase hex digits"}},
		{"not hex", file(`{"__metadata__":"` + hex(sumMeta) + `","a":"0000000g"}`), []string{`checksum of "a"`}},
		{"duplicate", file(`{"__metadata__":"` + hex(sumMeta) + `","a":"` + hex(sumA) + `","a":"` + hex(sumA) + `"}`), []string{`"a" appears twice`}},
		{"trailing", file(good + `x`), []string{"unexpected", `"x"`}},
		{"truncated", file(good[:len(good)-5]), []string{`"crc32c"`, "unexpected EOF"}},
		{"empty", file(``), []string{`"crc32c"`, "not a JSON object"}},
	} {
		_, err := Read(bytes.NewReader(tc.file), int64(len(tc.file)))
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a *FormatError", tc.name, err)
			continue
		}
		for _, s := range tc.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not contain %q", tc.name, err, s)
			}
		}
	}
}

// quoteJSON renders s as a JSON string.
func quoteJSON(s string) string { return string(appendJSONString(nil, s)) }

// Files without checksums, like timm's and older checkpoints, still load.
func TestNoChecksumsStillLoad(t *testing.T) {
	f, err := Read(bytes.NewReader(goldenFile), int64(len(goldenFile)))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tensors) != 3 {
		t.Fatalf("%d tensors", len(f.Tensors))
	}
	h, err := ReadHeader(bytes.NewReader(goldenFile), int64(len(goldenFile)))
	if err != nil || h.Checksums != nil {
		t.Fatalf("header checksums %v, %v; want none", h.Checksums, err)
	}
}
