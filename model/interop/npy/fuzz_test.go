package npy

import (
	"archive/zip"
	"bytes"
	"fmt"
	"math"
	"os"
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
}

func readSeed(f *testing.F, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

func FuzzDecode(f *testing.F) {
	f.Add(readSeed(f, golden+"f4_2x3.npy"))
	f.Add(readSeed(f, golden+"f8_4_v2.npy"))
	f.Add(encode(`{'descr': '<f2', 'fortran_order': False, 'shape': (), }`, []byte{0x00, 0x3c}))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		checkDecoded(t, a)
	})
}

func FuzzDecodeNPZ(f *testing.F) {
	f.Add(readSeed(f, golden+"arrays.npz"))
	one := string(encode(`{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }`, f32bytes(7)))
	f.Add(zipOf(f, zip.Store, [2]string{"k.npy", one}))
	f.Add(zipOf(f, zip.Deflate, [2]string{"k.npy", one}, [2]string{"j.npy", one}))
	f.Fuzz(func(t *testing.T, data []byte) {
		arrays, err := DecodeNPZ(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for i := range arrays {
			if arrays[i].Name == "" {
				t.Fatal("accepted an array without a name")
			}
			checkDecoded(t, &arrays[i])
		}
	})
}
