package npy

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "logits.npy")
	if err := WriteFile(path, []float32{1, 2, 3, 4, 5, 6}, []int{2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []float32{7}, []int{1}); err != nil {
		t.Fatal(err)
	}
	a, err := ReadFile(path)
	if err != nil || !slices.Equal(a.Shape, []int{1}) || a.Data[0] != 7 {
		t.Fatalf("read back %+v, %v", a, err)
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b)%64 != 4 {
		t.Fatalf("%d bytes (%v), want a 64-byte aligned preamble and 4 data bytes", len(b), err)
	}

	// Invalid arrays are refused before anything is written.
	for _, tc := range []struct {
		data  []float32
		shape []int
		want  string
	}{
		{[]float32{1}, []int{2}, "shape [2] holds 2 elements, data has 1"},
		{nil, []int{-1, 0}, "negative dimension"},
		{[]float32{1}, []int{1 << 62, 1 << 62}, "holds more elements than an array can"},
	} {
		err := WriteFile(path, tc.data, tc.shape)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("shape %v: got %v, want an error naming %s and containing %q", tc.shape, err, path, tc.want)
		}
	}
	if a, err := ReadFile(path); err != nil || a.Data[0] != 7 {
		t.Fatalf("previous file damaged: %+v, %v", a, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("folder holds %d entries, want only the array", len(entries))
	}

	missing := filepath.Join(dir, "no", "x.npy")
	if err := WriteFile(missing, []float32{1}, []int{1}); err == nil || !strings.Contains(err.Error(), missing) || strings.Count(err.Error(), missing) != 1 {
		t.Fatalf("missing folder: %v, want an error naming %s once", err, missing)
	}
}

// Every proper prefix of a valid .npy file or .npz archive is an error.
func TestDecodeTruncatedAtEveryLength(t *testing.T) {
	one := encode("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f32bytes(3, 4))
	for n := range len(one) {
		if _, err := Decode(bytes.NewReader(one[:n])); err == nil {
			t.Fatalf(".npy cut to %d of %d bytes accepted", n, len(one))
		}
	}
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		archive := zipOf(t, method, [2]string{"a.npy", string(one)}, [2]string{"b.npy", string(one)})
		for n := range len(archive) {
			if _, err := DecodeNPZ(bytes.NewReader(archive[:n]), int64(n)); err == nil {
				t.Fatalf(".npz (method %d) cut to %d of %d bytes accepted", method, n, len(archive))
			}
		}
	}
}

// Entries whose data overlap (a zip bomb's way of expanding one deflated
// block many times) are refused.
func TestDecodeNPZOverlappingEntries(t *testing.T) {
	one := string(compact("{'descr':'<f4','fortran_order':False,'shape':(1,)}", f32bytes(7)))
	archive := zipOf(t, zip.Deflate, [2]string{"a.npy", one}, [2]string{"b.npy", one})
	if _, err := DecodeNPZ(bytes.NewReader(archive), int64(len(archive))); err != nil {
		t.Fatal(err)
	}
	// Point b.npy's central directory record at a.npy's local header.
	cd := bytes.Index(archive, []byte("PK\x01\x02"))
	second := cd + 1 + bytes.Index(archive[cd+1:], []byte("PK\x01\x02"))
	bomb := bytes.Clone(archive)
	binary.LittleEndian.PutUint32(bomb[second+42:], 0)
	_, err := DecodeNPZ(bytes.NewReader(bomb), int64(len(bomb)))
	if err == nil || !strings.Contains(err.Error(), `entry "b.npy"`) || !strings.Contains(err.Error(), "overlaps") {
		t.Fatalf("overlapping entries: %v", err)
	}
}
