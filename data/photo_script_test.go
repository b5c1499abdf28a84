package data

import (
	"bytes"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// scripts/make_photo_set.py writes seeded crops, 500 px wide, as an image
// folder tree: the same seed gives the same files.
func TestMakePhotoSetScript(t *testing.T) {
	const python = "/usr/bin/python3"
	probe := exec.Command(python, "-c", "import PIL, importlib.util, sys; sys.exit(importlib.util.find_spec('skimage') is None)")
	if err := probe.Run(); err != nil {
		t.Skipf("Debian's python3-skimage and python3-pil are not installed (%v)", err)
	}
	var dirs [2]string
	for k := range dirs {
		dirs[k] = filepath.Join(t.TempDir(), "photos")
		out, err := exec.Command(python, "../scripts/make_photo_set.py", "--out", dirs[k], "--train", "15", "--val", "2", "--seed", "7").CombinedOutput()
		if err != nil {
			t.Fatalf("make_photo_set.py: %v\n%s", err, out)
		}
	}
	ds, err := OpenImageFolderSplit(dirs[0], Train, FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 15 || len(ds.Classes()) != 14 {
		t.Fatalf("%d images in %d classes, want 15 in 14", ds.Len(), len(ds.Classes()))
	}
	for _, f := range ds.Files {
		a, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dirs[0], f)
		b, err := os.ReadFile(filepath.Join(dirs[1], rel))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs with one seed (%v)", rel, err)
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(a))
		if err != nil || cfg.Width != 500 || cfg.Height < 200 || cfg.Height > 500 {
			t.Errorf("%s: %d × %d, %v; want 500 wide", rel, cfg.Width, cfg.Height, err)
		}
	}
	if val, err := OpenImageFolderSplit(dirs[0], Test, FolderOptions{}); err != nil || val.Len() != 2 {
		t.Errorf("val split: %v", err)
	}
	out, err := exec.Command(python, "../scripts/pil_photo_bench.py", "--photos", dirs[0], "--passes", "1").CombinedOutput()
	if err != nil || !regexp.MustCompile(`(?m)^decode +[0-9.]+ cpu-ms/image\nrrc-flip +[0-9.]+ cpu-ms/image$`).Match(out) {
		t.Errorf("pil_photo_bench.py: %v\n%s", err, out)
	}
}
