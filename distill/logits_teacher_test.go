package distill

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/formats/npy"
)

func TestLogitsTeacherMixesRowsLikeTheImages(t *testing.T) {
	lt := &LogitsTeacher{path: "x.npy", data: []float32{1, 0, 0, 1, 2, 2}, n: 3, c: 2}
	dst := make([]float32, 4)
	if err := lt.Fill(nil, []int{0, 2}, augment.MixInfo{Lam: 0.75}, dst); err != nil {
		t.Fatal(err)
	}
	// Row 0 = 0.75·(1, 0) + 0.25·(2, 2); row 1 = 0.75·(2, 2) + 0.25·(1, 0).
	if want := []float32{1.25, 0.5, 1.75, 1.5}; !slices.Equal(dst, want) {
		t.Fatalf("mixed teacher logits %v, want %v", dst, want)
	}
	if err := lt.Fill(nil, []int{3}, augment.MixInfo{Lam: 1}, dst); err == nil || !strings.Contains(err.Error(), "x.npy") {
		t.Fatalf("want an out-of-range error naming the file, got %v", err)
	}
}

func TestOpenLogitsTeacherChecksTheShape(t *testing.T) {
	dir := t.TempDir()
	logits := []float32{1, 2, 3, 4, 5, 6}
	for _, c := range []struct {
		shape []int
		n, c  int
		want  string
	}{
		{[]int{3, 2}, 3, 2, ""},
		{[]int{3, 2}, 4, 2, "N = 3 rows, but the training set has 4 items"},
		{[]int{3, 2}, 3, 3, "C = 2 columns, but the model has 3 classes"},
		{[]int{6}, 3, 2, "want (N, C)"},
	} {
		path := filepath.Join(dir, "t.npy")
		if err := npy.WriteFile(path, logits, c.shape); err != nil {
			t.Fatal(err)
		}
		lt, err := OpenLogitsTeacher(path, c.n, c.c)
		if c.want == "" {
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]float32, 2)
			if err := lt.Fill(nil, []int{2}, augment.MixInfo{Lam: 1}, dst); err != nil || !slices.Equal(dst, []float32{5, 6}) {
				t.Fatalf("row 2 = %v, %v; want [5 6]", dst, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("shape %v for (%d, %d): want an error naming %s and %q, got %v", c.shape, c.n, c.c, path, c.want, err)
		}
	}
	if _, err := OpenLogitsTeacher(filepath.Join(dir, "missing.npy"), 3, 2); err == nil || !strings.Contains(err.Error(), "distill.teacher_logits") {
		t.Errorf("a missing file: want an error naming distill.teacher_logits, got %v", err)
	}
}
