package npy

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

const golden = "../../interop/testdata/golden/" // written by scripts/make_golden.py with NumPy

// values returns i/4 - 1 for i < n, the values make_golden.py writes.
func values(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(i)/4 - 1
	}
	return out
}

func checkArray(t *testing.T, a Array, descr string, shape []int, data []float32) {
	t.Helper()
	if a.Descr != descr || !slices.Equal(a.Shape, shape) || !slices.Equal(a.Data, data) {
		t.Errorf("%q: got %s %v %v, want %s %v %v", a.Name, a.Descr, a.Shape, a.Data, descr, shape, data)
	}
}

func TestReadFileNumPy(t *testing.T) {
	a, err := ReadFile(golden + "f4_2x3.npy")
	if err != nil {
		t.Fatal(err)
	}
	checkArray(t, *a, "<f4", []int{2, 3}, values(6))
	a, err = ReadFile(golden + "f8_4_v2.npy") // format version 2.0
	if err != nil {
		t.Fatal(err)
	}
	checkArray(t, *a, "<f8", []int{4}, values(4))
}

func TestReadNPZNumPy(t *testing.T) {
	arrays, err := ReadNPZ(golden + "arrays.npz")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Array{}
	for _, a := range arrays {
		got[a.Name] = a
	}
	if len(got) != 5 {
		t.Fatalf("got %d arrays %v, want 5", len(got), arrays)
	}
	checkArray(t, got["f4_2x3x4_fortran"], "<f4", []int{2, 3, 4}, values(24))
	checkArray(t, got["f4_2x3"], "<f4", []int{2, 3}, values(6))
	checkArray(t, got["Transformer/f8_4"], "<f8", []int{4}, values(4))
	checkArray(t, got["f2_scalar"], "<f2", []int{}, []float32{0.75})
	checkArray(t, got["f4_0x3"], "<f4", []int{0, 3}, []float32{})
}

// encode writes a version 1.0 .npy file with the given header dictionary
// and raw data, padded as NumPy pads it.
func encode(dict string, data []byte) []byte {
	h := dict
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	out := []byte(magic + "\x01\x00")
	out = binary.LittleEndian.AppendUint16(out, uint16(len(h)))
	return append(append(out, h...), data...)
}

func f32bytes(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func TestDecodeHeaderForms(t *testing.T) {
	for _, tc := range []struct {
		dict  string
		shape []int
	}{
		{`{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }`, []int{2, 1}},
		{`{"shape":(2,),"descr":"<f4","fortran_order":False}`, []int{2}},
		{`{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2,)}`, []int{1, 2}},
	} {
		a, err := Decode(bytes.NewReader(encode(tc.dict, f32bytes(1.5, -2))))
		if err != nil {
			t.Errorf("%s: %v", tc.dict, err)
			continue
		}
		checkArray(t, *a, "<f4", tc.shape, []float32{1.5, -2})
	}
}

func TestDecodeFortranOrder(t *testing.T) {
	// The (2, 3) matrix [[0 1 2] [3 4 5]] stored column by column.
	file := encode(`{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }`, f32bytes(0, 3, 1, 4, 2, 5))
	a, err := Decode(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	checkArray(t, *a, "<f4", []int{2, 3}, []float32{0, 1, 2, 3, 4, 5})
}

func TestDecodeErrors(t *testing.T) {
	good := `{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }`
	data := f32bytes(1, 2)
	valid := encode(good, data)
	long := []byte(magic + "\x01\x00\xff\xff")
	for _, tc := range []struct {
		name, want string
		file       []byte
	}{
		{"empty", "too short", nil},
		{"magic", "magic string", append([]byte("\x93NUMPZ"), valid[6:]...)},
		{"version", "format version 4.0", append([]byte(magic+"\x04\x00"), valid[8:]...)},
		{"length cut", "inside the 2-byte header length", []byte(magic + "\x01\x00\x10")},
		{"header cut", "truncated after 4 bytes", append(long, "{'de"...)},
		{"header limit", "exceeds the limit", []byte(magic + "\x02\x00\xff\xff\xff\x7f")},
		{"descr", `'descr' is "<i8"`, encode(strings.Replace(good, "<f4", "<i8", 1), data)},
		{"big endian", `'descr' is ">f4"`, encode(strings.Replace(good, "<f4", ">f4", 1), data)},
		{"bool", `'fortran_order' is "0"`, encode(strings.Replace(good, "False", "0", 1), data)},
		{"unknown key", `unknown key "extra"`, encode(strings.Replace(good, "}", "'extra': 1}", 1), data)},
		{"missing key", "'shape' is missing", encode(`{'descr': '<f4', 'fortran_order': False}`, data)},
		{"duplicate", `"descr" appears twice`, encode(strings.Replace(good, "}", "'descr': '<f4'}", 1), data)},
		{"not a tuple", "(2) is not a tuple", encode(strings.Replace(good, "(2,)", "(2)", 1), data)},
		{"negative", `"" is not a non-negative integer`, encode(strings.Replace(good, "(2,)", "(-2,)", 1), data)},
		{"huge dim", `"99999999999999999999" is not`, encode(strings.Replace(good, "(2,)", "(99999999999999999999,)", 1), data)},
		{"too many bytes", "needs more than", encode(strings.Replace(good, "(2,)", "(1048576, 1048576)", 1), data)},
		{"unterminated", "unterminated string", encode(`{'descr`, data)},
		{"after dict", "after the dictionary", encode(good+"x", data)},
		{"no comma", "expected ',' or '}'", encode(strings.Replace(good, ", 'fortran", " 'fortran", 1), data)},
		{"escape", "escape sequences", encode(`{'de\scr': '<f4'}`, data)},
		{"data cut", "truncated after 7 bytes", valid[:len(valid)-1]},
		{"trailing", "trailing bytes at byte 136", append(valid, 0)},
	} {
		_, err := Decode(bytes.NewReader(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// zipOf builds an .npz archive of the given entries, stored or deflated.
func zipOf(t testing.TB, method uint16, entries ...[2]string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e[0], Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e[1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecodeNPZ(t *testing.T) {
	one := string(encode(`{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }`, f32bytes(3, 4)))
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		z := zipOf(t, method, [2]string{"a/b.npy", one}, [2]string{"c.npy", one})
		arrays, err := DecodeNPZ(bytes.NewReader(z), int64(len(z)))
		if err != nil {
			t.Fatal(err)
		}
		if len(arrays) != 2 || arrays[0].Name != "a/b" || arrays[1].Name != "c" {
			t.Fatalf("method %d: got %+v", method, arrays)
		}
		checkArray(t, arrays[1], "<f4", []int{2}, []float32{3, 4})
	}
}

func TestDecodeNPZErrors(t *testing.T) {
	one := string(encode(`{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }`, f32bytes(3, 4)))
	stored := zipOf(t, zip.Store, [2]string{"x.npy", one})
	flipped := bytes.Clone(stored)
	flipped[bytes.Index(flipped, f32bytes(3))] ^= 1 // data byte: the CRC-32 no longer matches
	for _, tc := range []struct {
		name, want string
		file       []byte
	}{
		{"not zip", "not a valid zip archive", []byte("PK\x03\x04 but not really a zip archive")},
		{"not npy", `entry "x.txt" is not a NAME.npy array`, zipOf(t, zip.Store, [2]string{"x.txt", one})},
		{"dir", `entry "d/" is not`, zipOf(t, zip.Store, [2]string{"d/", ""})},
		{"dup", `entry "x.npy" appears twice`, zipOf(t, zip.Store, [2]string{"x.npy", one}, [2]string{"x.npy", one})},
		{"bad array", `entry "x.npy": magic string`, zipOf(t, zip.Deflate, [2]string{"x.npy", "hello, world"})},
		{"checksum", "checksum", flipped},
		{"truncated", "not a valid zip archive", stored[:len(stored)-10]},
	} {
		_, err := DecodeNPZ(bytes.NewReader(tc.file), int64(len(tc.file)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestReadErrorsNamePath(t *testing.T) {
	if _, err := ReadFile(golden + "arrays.npz"); err == nil || !strings.Contains(err.Error(), "arrays.npz") {
		t.Errorf("ReadFile of a zip: %v", err)
	}
	if _, err := ReadNPZ(golden + "f4_2x3.npy"); err == nil || !strings.Contains(err.Error(), "f4_2x3.npy") {
		t.Errorf("ReadNPZ of a .npy: %v", err)
	}
	if _, err := ReadNPZ(golden + "missing.npz"); err == nil {
		t.Error("ReadNPZ of a missing file succeeded")
	}
}

func ExampleDecode() {
	file := encode(`{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }`, f32bytes(0.5, 2))
	a, err := Decode(bytes.NewReader(file))
	fmt.Println(a.Shape, a.Data, err)
	// Output: [1 2] [0.5 2] <nil>
}
