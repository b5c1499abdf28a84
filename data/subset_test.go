package data

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// classSorted is a Memory of n 1×1 images per class, sorted by class as an
// image folder lists them.
func classSorted(classes, n int) *Memory {
	m := &Memory{Name: "sorted", N: classes * n, C: 1, H: 1, W: 1, Pix: make([]uint8, classes*n)}
	for c := range classes {
		m.ClassNames = append(m.ClassNames, string(rune('a'+c)))
		for i := range n {
			m.Pix[c*n+i] = uint8(i)
			m.Labels = append(m.Labels, c)
		}
	}
	return m
}

func TestSubsetCoversTheClasses(t *testing.T) {
	ds := classSorted(4, 25)
	for _, n := range []int{4, 10, 99} {
		s := Subset(ds, n)
		if s.Len() != n {
			t.Fatalf("Subset(%d).Len() = %d", n, s.Len())
		}
		count := make([]int, 4)
		var pix []uint8
		for i := range n {
			img, l, err := s.Item(i)
			if err != nil {
				t.Fatal(err)
			}
			count[l]++
			pix = append(pix, uint8(img.Pix[0]*255+0.5))
		}
		// Every class gets n/4 items, or one more.
		for c, k := range count {
			if k < n/4 || k > n/4+1 {
				t.Errorf("Subset(%d): class %d has %d items: %v", n, c, k, count)
			}
		}
		// Not the first items of each class: the draw is shuffled.
		if n == 10 && slices.Equal(pix[:2], []uint8{0, 1}) && slices.Equal(pix[3:5], []uint8{0, 1}) {
			t.Errorf("Subset(10) took the first items of each class: %v", pix)
		}
		// The same subset on every call.
		again := Subset(ds, n)
		for i := range n {
			_, l1, _ := s.Item(i)
			_, l2, _ := again.Item(i)
			img1, _, _ := s.Item(i)
			img2, _, _ := again.Item(i)
			if l1 != l2 || img1.Pix[0] != img2.Pix[0] {
				t.Fatalf("Subset(%d) differs between calls at %d", n, i)
			}
		}
	}
	if Subset(ds, 0) != Dataset(ds) || Subset(ds, 100) != Dataset(ds) || Subset(ds, 500) != Dataset(ds) {
		t.Error("a subset of 0, or of at least all the items, is not the dataset")
	}
	if _, _, err := Subset(ds, 5).Item(5); err == nil || !strings.Contains(err.Error(), "item 5 of a view of 5") {
		t.Errorf("index past the subset: %v", err)
	}
}

// TestSubsetOfAFolderReportsItsSkips checks that a subset of an image
// folder still reports the folder's skipped files.
func TestSubsetOfAFolderReportsItsSkips(t *testing.T) {
	root := t.TempDir()
	good := pngBytes(t, patternRGBA(4, 4))
	for _, c := range []string{"a", "b"} {
		for _, n := range []string{"0.png", "1.png", "2.png"} {
			writeFile(t, filepath.Join(root, c, n), good)
		}
	}
	writeFile(t, filepath.Join(root, "a", "0.png"), []byte("not a PNG"))
	f, err := OpenImageFolder(root, FolderOptions{SkipCorrupt: true})
	if err != nil {
		t.Fatal(err)
	}
	s := Subset(f, 5)
	for i := range s.Len() {
		if _, _, err := s.Item(i); err != nil {
			t.Fatal(err)
		}
	}
	r, ok := FolderOf(s)
	if !ok {
		t.Fatal("FolderOf a subset of an image folder found none")
	}
	if rep := r.SkipReport(); !strings.Contains(rep, "1 of 6 files") || !strings.Contains(rep, "0.png") {
		t.Errorf("report %q", rep)
	}
	if _, ok := FolderOf(classSorted(2, 2)); ok {
		t.Error("FolderOf a Memory found a folder")
	}
}

func TestImageFolderCheckNamesEveryBadFile(t *testing.T) {
	root := t.TempDir()
	good := pngBytes(t, patternRGBA(4, 4))
	for _, n := range []string{"a/0.png", "a/1.png", "b/2.png", "b/3.png", "b/4.png"} {
		writeFile(t, filepath.Join(root, n), good)
	}
	writeFile(t, filepath.Join(root, "a", "1.png"), good[:20])
	writeFile(t, filepath.Join(root, "b", "4.png"), []byte("text"))
	f, err := OpenImageFolder(root, FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 3} {
		bad := f.Check(workers)
		if len(bad) != 2 || !strings.HasSuffix(bad[0].Path, "1.png") || !strings.HasSuffix(bad[1].Path, "4.png") ||
			!strings.Contains(bad[0].Err.Error(), "1.png") {
			t.Errorf("Check(%d) = %v", workers, bad)
		}
	}
	if got, ok := FolderOf(Subset(f, 2)); !ok || got != f {
		t.Error("FolderOf a subset of a folder is not the folder")
	}
}

// SubsetIndices are the items Subset keeps, from the labels alone.
func TestSubsetIndicesAreSubsets(t *testing.T) {
	ds := labelled(500)
	labels := make([]int, ds.Len())
	for i := range labels {
		labels[i] = ds.Label(i)
	}
	for _, n := range []int{1, 7, 100, 499} {
		v, ok := Subset(ds, n).(View)
		if !ok {
			t.Fatalf("Subset(%d) is a %T", n, Subset(ds, n))
		}
		if got := SubsetIndices(labels, len(ds.Classes()), n); !slices.Equal(got, v.Indices) {
			t.Errorf("n = %d: SubsetIndices %v, Subset keeps %v", n, got, v.Indices)
		}
	}
}

// A subset of a view (the held-out images of data.val_split) is drawn
// from the view's labels as a subset of a Memory is, so that it covers the
// classes and a study can tell its items from the labels alone.
func TestSubsetOfAViewCoversTheClasses(t *testing.T) {
	ds := classSorted(4, 25)
	var indices, labels []int
	for i := ds.Len() - 1; i >= 0; i -= 3 {
		indices = append(indices, i)
		labels = append(labels, ds.Labels[i])
	}
	for _, view := range []Dataset{View{Dataset: ds, Indices: indices}, NewView(ds, indices)} {
		s, ok := Subset(view, 10).(View)
		if !ok {
			t.Fatalf("Subset of a view is a %T", Subset(view, 10))
		}
		if want := SubsetIndices(labels, 4, 10); !slices.Equal(s.Indices, want) {
			t.Errorf("Subset of a %T keeps %v, want the class-covering %v", view, s.Indices, want)
		}
	}
}
