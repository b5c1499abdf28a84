package viz

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func TestSavePNGReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "curves.png")
	blank := func(draw.Canvas) {}
	if err := savePNG(path, vg.Inch, vg.Inch, blank); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(old)); err != nil {
		t.Fatalf("not a PNG: %v", err)
	}

	// A drawing that panics is an error and leaves the previous picture.
	err = savePNG(path, vg.Inch, vg.Inch, func(draw.Canvas) { panic("bad axis") })
	if err == nil || !strings.Contains(err.Error(), "bad axis") || !strings.Contains(err.Error(), path) {
		t.Fatalf("panicking paint: %v", err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, old) {
		t.Fatal("the previous picture changed")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("folder holds %d entries, want only the picture", len(entries))
	}

	missing := filepath.Join(dir, "no", "x.png")
	err = savePNG(missing, vg.Inch, vg.Inch, blank)
	if err == nil || strings.Count(err.Error(), missing) != 1 {
		t.Fatalf("missing folder: %v, want an error naming %s once", err, missing)
	}
}
