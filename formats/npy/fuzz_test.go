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

// checkDecoded asserts what every accepted array satisfies, and that it
// survives encoding as '<f4' and decoding bit for bit.
func checkDecoded(t *testing.T, a *Array) {
	n := 1
	for _, d := range a.Shape {
		if d < 0 {
			t.Fatalf("negative dimension in %v", a.Shape)
		}
		n *= d
	}
	if n != len(a.Data) {
		t.Fatalf("shape %v holds %d elements, got %d", a.Shape, n, len(a.Data))
	}
	dims := make([]string, len(a.Shape))
	for i, d := range a.Shape {
		dims[i] = fmt.Sprint(d) + ","
	}
	again, err := Decode(bytes.NewReader(encode("{'descr': '<f4', 'fortran_order': False, 'shape': ("+strings.Join(dims, " ")+"), }", f32bytes(a.Data...))))
	if err != nil {
		t.Fatalf("re-encoded array: %v", err)
	}
	for i := range a.Data {
		if math.Float32bits(a.Data[i]) != math.Float32bits(again.Data[i]) {
			t.Fatalf("element %d: %g became %g", i, a.Data[i], again.Data[i])
		}
	}
	// Encode writes it back, and that reads again unchanged.
	var buf bytes.Buffer
	if err := Encode(&buf, a.Data, a.Shape); err != nil {
		t.Fatalf("Encode: %v", err)
	}
	written, err := Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("re-reading what Encode wrote: %v", err)
	}
	if !slices.Equal(a.Shape, written.Shape) || !equalFloats(a.Data, written.Data) {
		t.Fatalf("Encode and Decode changed the array: shape %v → %v", a.Shape, written.Shape)
	}
}

// Seeds stay small: Go's fuzzing engine minimises each input that reaches
// new code in time quadratic in its length (capped by -fuzzminimizetime,
// 60 s by default), so a 1.4 kB archive seed kept the only worker
// minimising for whole runs. The golden files are read by the unit tests.

// maxFuzzArchive bounds the archive fuzz inputs, as libFuzzer's -max_len
// does: longer inputs took 15 to 30 seconds each to minimise, and a few
// small entries reach every path of DecodeNPZ.
const maxFuzzArchive = 1 << 10

// compact returns a .npy file with the header dictionary unpadded, which
// Decode accepts as NumPy does.
func compact(dict string, data []byte) []byte {
	h := dict + "\n"
	out := binary.LittleEndian.AppendUint16([]byte(magic+"\x01\x00"), uint16(len(h)))
	return append(append(out, h...), data...)
}

func FuzzDecode(f *testing.F) {
	f.Add(compact("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f32bytes(1, 2, 3, 4, 5, 6)))
	f.Add(compact("{'descr':'<f8','fortran_order':True,'shape':(2,1,)}", make([]byte, 16)))
	f.Add(compact("{'descr': '<f2', 'fortran_order': False, 'shape': (), }", []byte{0x00, 0x3c}))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		checkDecoded(t, a)
	})
}

func FuzzDecodeNPZ(f *testing.F) {
	one := string(compact("{'descr':'<f4','fortran_order':False,'shape':(1,)}", f32bytes(7)))
	f.Add(zipOf(f, zip.Store, [2]string{"k.npy", one}))
	f.Add(zipOf(f, zip.Deflate, [2]string{"k.npy", one}, [2]string{"j.npy", one}))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzArchive {
			return
		}
		arrays, err := DecodeNPZ(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		checkArchive(t, arrays)
	})
}

// FuzzDecodeNPZEntries builds well-formed archives (valid CRCs) of two
// entries from fuzzed names, contents and compression, so that mutations
// reach the .npy decoding behind zip's stored and deflate readers rather
// than failing the checksum.
func FuzzDecodeNPZEntries(f *testing.F) {
	one := compact("{'descr':'<f4','fortran_order':False,'shape':(1,)}", f32bytes(7))
	two := compact("{'descr':'<f2','fortran_order':True,'shape':(1,2)}", []byte{0, 0x3c, 0, 0xbc})
	f.Add(uint8(0), "a.npy", one, "b.npy", two)
	f.Add(uint8(3), "a/b.npy", two, "a/b.npy", one)
	f.Add(uint8(1), "x.npy", one, "y.txt", []byte{})
	f.Fuzz(func(t *testing.T, methods uint8, name1 string, npy1 []byte, name2 string, npy2 []byte) {
		if len(npy1)+len(npy2) > maxFuzzArchive/2 {
			return
		}
		method := func(bit uint8) uint16 {
			if methods&bit != 0 {
				return zip.Deflate
			}
			return zip.Store
		}
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, e := range []struct {
			name   string
			data   []byte
			method uint16
		}{{name1, npy1, method(1)}, {name2, npy2, method(2)}} {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: e.method})
			if err != nil {
				return
			}
			w.Write(e.data)
		}
		if zw.Close() != nil {
			return
		}
		arrays, err := DecodeNPZ(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			return
		}
		if len(arrays) != 2 || arrays[0].Name+".npy" != name1 || arrays[1].Name+".npy" != name2 {
			t.Fatalf("entries %q and %q read as %d arrays", name1, name2, len(arrays))
		}
		checkArchive(t, arrays)
	})
}

func checkArchive(t *testing.T, arrays []Array) {
	seen := map[string]bool{}
	for i := range arrays {
		if arrays[i].Name == "" || seen[arrays[i].Name] {
			t.Fatalf("accepted an array without a name, or twice: %q", arrays[i].Name)
		}
		seen[arrays[i].Name] = true
		checkDecoded(t, &arrays[i])
	}
}
