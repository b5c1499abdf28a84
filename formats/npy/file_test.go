package npy

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// golden2x3 is np.save of np.arange(1, 7, dtype='<f4').reshape(2, 3), laid
// out by hand from the format description: the 6-byte magic, version 1.0,
// the header length 118 as a little-endian uint16, the 59-byte dictionary,
// 58 spaces and a newline (10 + 118 = 128, a multiple of 64), then six
// little-endian float32s: 1.0 is 0x3f800000, 2.0 0x40000000, 3.0 0x40400000,
// 4.0 0x40800000, 5.0 0x40a00000, 6.0 0x40c00000.
var golden2x3 = "\x93NUMPY\x01\x00\x76\x00" +
	"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + strings.Repeat(" ", 58) + "\n" +
	"\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40\x00\x00\xa0\x40\x00\x00\xc0\x40"

// goldenV2F8 is a format 2.0 file of two float64s, 0.5 and −2.25: the
// header length 116 is a little-endian uint32 (12 + 116 = 128).
var goldenV2F8 = "\x93NUMPY\x02\x00\x74\x00\x00\x00" +
	"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }" + strings.Repeat(" ", 58) + "\n" +
	"\x00\x00\x00\x00\x00\x00\xe0\x3f\x00\x00\x00\x00\x00\x00\x02\xc0"

// goldenReordered has the fields in another order, double quotes, no
// trailing comma and no alignment padding: 55 bytes and a newline.
var goldenReordered = "\x93NUMPY\x01\x00\x38\x00" +
	`{"shape": (3,), "fortran_order": False, "descr": "<f4"}` + "\n" +
	"\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40"

// readData reads the array at path as its elements and shape.
func readFileData(path string) ([]float32, []int, error) {
	a, err := ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return a.Data, a.Shape, nil
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "logits.npy")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestWriteFileMatchesGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.npy")
	if err := WriteFile(path, []float32{1, 2, 3, 4, 5, 6}, []int{2, 3}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != golden2x3 {
		t.Fatalf("got\n%q\nwant\n%q", got, golden2x3)
	}
}

func TestReadFileGolden(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		data          []float32
		shape         []int
	}{
		{"v1 f4", golden2x3, []float32{1, 2, 3, 4, 5, 6}, []int{2, 3}},
		{"v2 f8", goldenV2F8, []float32{0.5, -2.25}, []int{2}},
		{"reordered", goldenReordered, []float32{1, 2, 3}, []int{3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, shape, err := readFileData(writeFile(t, tc.content))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(shape, tc.shape) || !equalFloats(data, tc.data) {
				t.Fatalf("got %v %v, want %v %v", shape, data, tc.shape, tc.data)
			}
		})
	}
}

// equalFloats compares bit patterns, so NaNs and −0 count.
func equalFloats(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func TestWriteFileReadFileRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for _, shape := range [][]int{{4, 10}, {1, 1}, {0, 7}, {3000, 10}, {5}, {}, {2, 3, 4}} {
		n := 1
		for _, d := range shape {
			n *= d
		}
		data := make([]float32, n)
		for i := range data {
			data[i] = float32(rng.NormFloat64() * 10)
		}
		if n > 4 {
			data[0], data[1], data[2], data[3] = float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), float32(math.NaN())
		}
		path := filepath.Join(dir, "rt.npy")
		if err := WriteFile(path, data, shape); err != nil {
			t.Fatal(err)
		}
		got, gotShape, err := readFileData(path)
		if err != nil {
			t.Fatalf("shape %v: %v", shape, err)
		}
		if !slices.Equal(gotShape, shape) || !equalFloats(got, data) {
			t.Fatalf("shape %v: read back %v with different data", shape, gotShape)
		}
		info, _ := os.Stat(path)
		if (info.Size()-int64(4*n))%64 != 0 {
			t.Fatalf("shape %v: data starts at an unaligned offset", shape)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want only rt.npy", len(entries))
	}
}

func TestWriteFileVersion2ForLongHeaders(t *testing.T) {
	shape := make([]int, 25000) // "1, " ×25000 needs a header over 65535 bytes
	for i := range shape {
		shape[i] = 1
	}
	path := filepath.Join(t.TempDir(), "long.npy")
	if err := WriteFile(path, []float32{7}, shape); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if raw[6] != 2 || raw[7] != 0 {
		t.Fatalf("version %d.%d, want 2.0", raw[6], raw[7])
	}
	// The 4-byte header length covers the padded header; the data follows.
	hlen := int(raw[8]) | int(raw[9])<<8 | int(raw[10])<<16 | int(raw[11])<<24
	if hlen <= 65535 || (12+hlen)%64 != 0 || len(raw) != 12+hlen+4 {
		t.Fatalf("header length %d in a file of %d bytes", hlen, len(raw))
	}
}

func TestReadFileRejectsMalformed(t *testing.T) {
	header := func(dict string) string {
		h := dict + "\n"
		return "\x93NUMPY\x01\x00" + string([]byte{byte(len(h)), byte(len(h) >> 8)}) + h
	}
	f4 := func(n int) string { return strings.Repeat("\x00\x00\x80\x3f", n) }
	ok := "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
	for _, tc := range []struct {
		name, content, want string
	}{
		{"empty", "", "file of 0 bytes is too short for the 8-byte magic and version"},
		{"short", "\x93NUM", "too short"},
		{"bad magic", "\x93NUMPX\x01\x00" + golden2x3[8:], `magic string "\x93NUMPX"`},
		{"version 4.0", "\x93NUMPY\x04\x00" + golden2x3[8:], "format version 4.0"},
		{"version 1.1", "\x93NUMPY\x01\x01" + golden2x3[8:], "format version 1.1"},
		{"no header length", "\x93NUMPY\x01\x00\x05", "file ends inside the 2-byte header length at byte 8"},
		{"header beyond file", "\x93NUMPY\x01\x00\xff\x7f{}", "header of 32767 bytes from byte 10 is truncated after 2 bytes"},
		{"int dtype", header("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }") + f4(1), `field 'descr' is "<i4"`},
		{"big endian", header("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }") + f4(1), `field 'descr' is ">f4"`},
		{"fortran garbage", header("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3), }") + f4(6), `field 'fortran_order' is "0", want True or False`},
		{"truncated", header(ok) + f4(5), "data from byte 70 (shape [2 3] of <f4, 24 bytes): truncated after 20 bytes"},
		{"trailing bytes", header(ok) + f4(6) + "x", "trailing bytes at byte 94"},
		{"missing shape", header("{'descr': '<f4', 'fortran_order': False}") + f4(1), `key 'shape' is missing`},
		{"duplicate", header("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}") + f4(1), `key "descr" appears twice`},
		{"unknown field", header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}") + f4(1), `unknown key "x"`},
		{"shape not a tuple", header("{'descr': '<f4', 'fortran_order': False, 'shape': (3)}") + f4(3), "(3) is not a tuple"},
		{"negative dim", header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3)}") + f4(3), "is not a non-negative integer"},
		{"float dim", header("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,)}") + f4(3), "field 'shape': expected ',' or ')', found '.'"},
		{"huge dim", header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}") + f4(1), `"99999999999999999999" is not a non-negative integer`},
		{"overflowing shape", header("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296)}") + f4(1), "needs more than 1099511627776 bytes"},
		{"text after dict", header(ok+" junk") + f4(6), `after the dictionary`},
		{"unterminated", header("{'descr: '<f4'}"), "expected ':'"},
		{"no dict", header("[1, 2]"), "expected '{'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.content)
			_, _, err := readFileData(path)
			if err == nil {
				t.Fatal("expected an error")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q should name %s and mention %q", err, path, tc.want)
			}
		})
	}
}

func TestReadFileMissingFile(t *testing.T) {
	if _, _, err := readFileData(filepath.Join(t.TempDir(), "absent.npy")); err == nil {
		t.Fatal("expected an error")
	}
}

func TestWriteFileErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.npy")
	if err := WriteFile(path, []float32{1, 2, 3}, []int{2, 2}); err == nil || !strings.Contains(err.Error(), "holds 4 elements, data has 3") {
		t.Fatalf("shape mismatch: %v", err)
	}
	if err := WriteFile(path, nil, []int{-1, 0}); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Fatalf("negative dimension: %v", err)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x.npy"), []float32{1}, []int{1}); err == nil {
		t.Fatal("missing directory: expected an error")
	}
	// A successful write replaces an existing file whole.
	if err := os.WriteFile(path, []byte("old contents"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []float32{1, 2, 3, 4, 5, 6}, []int{2, 3}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != golden2x3 {
		t.Fatal("the existing file was not replaced")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("temporary files left behind: %d entries", len(entries))
	}
}
