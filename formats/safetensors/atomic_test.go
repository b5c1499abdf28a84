package safetensors

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	v1 := []Tensor{{Name: "w", Shape: []int{2}, Data: []float32{1, 2}}}
	v2 := []Tensor{{Name: "w", Shape: []int{3}, Data: []float32{3, 4, 5}}}
	if err := WriteFileAtomic(path, v1, map[string]string{"step": "1"}); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, v2, map[string]string{"step": "2"}); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Metadata["step"] != "2" || !slices.Equal(f.Tensors[0].Data, []float32{3, 4, 5}) {
		t.Fatalf("read back %+v", f)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}

	// A failed write leaves the previous file whole and no temporary files.
	bad := []Tensor{{Name: "w", Shape: []int{4}, Data: []float32{1}}}
	err = WriteFileAtomic(path, bad, nil)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `tensor "w"`) {
		t.Fatalf("bad write: %v, want an error naming the path and tensor", err)
	}
	if f, err := ReadFile(path); err != nil || f.Metadata["step"] != "2" {
		t.Fatalf("previous file damaged: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("directory holds %v, want only the checkpoint", names)
	}

	missing := filepath.Join(dir, "no", "such", "dir", "x.safetensors")
	if err := WriteFileAtomic(missing, v1, nil); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("write into a missing directory: %v", err)
	}
}
