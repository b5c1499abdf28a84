package main

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/data"
)

// prepare writes both splits; train reads them as data.dataset=prepared.
func TestPrepareThenTrain(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	for _, split := range []string{"train", "val"} {
		for c, class := range []string{"cat", "dog"} {
			for k := range 4 {
				writePNG(t, filepath.Join(src, split, class, string(rune('a'+k))+".png"), 40+8*k, 30, uint8(100*c+10*k))
			}
		}
	}
	// A photograph the decoder does not read is left out with a note.
	heic := filepath.Join(src, "train", "dog", "phone.HEIC")
	if err := os.WriteFile(heic, []byte("ftypheic"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "prepared")
	got, err := run(t, "prepare", "--root", src, "--out", out, "--max-side", "32", "--quality", "95")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "note: data.root = "+src+": 1 image file of a format vit-train does not read (.heic: 1) is left out; convert it to JPEG or PNG to use it: "+heic) {
		t.Errorf("output %q does not note %s", got, heic)
	}
	for _, name := range []string{"train.shard", "test.shard"} {
		if !strings.Contains(got, filepath.Join(out, name)+": 8 images") {
			t.Errorf("output %q does not report %s", got, name)
		}
	}
	p, err := data.OpenPreparedSplit(out, data.Test)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	img, label, err := p.Item(7)
	if err != nil || img.W != 32 || img.H != 15 || label != 1 {
		t.Errorf("test item 7: %d × %d, label %d, %v; want 15 × 32, label 1", img.H, img.W, label, err)
	}
	if _, err := run(t, "train", "--set", "data.dataset=prepared", "--set", "data.root="+out, "--set", "model.name=vit_fmnist_patch4_28",
		"--set", "model.in_chans=3", "--set", "model.num_classes=2", "--set", "epochs=1", "--set", "data.batch_size=4",
		"--set", "data.eval_batch_size=4", "--set", "aug.train=rrc-flip", "--set", "progress=false", "--out", filepath.Join(dir, "run")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "run", "last.safetensors")); err != nil {
		t.Errorf("the run on the prepared set left no checkpoint: %v", err)
	}
	if _, err := run(t, "prepare", "--root", src, "--out", out, "--encoding", "raw", "--quality", "80"); err == nil || !strings.Contains(err.Error(), "no effect") {
		t.Errorf("--quality with raw: %v", err)
	}

	// Class folders with no split: train.shard alone, trained on with
	// data.val_split, and only into a folder without an earlier test.shard.
	flat := filepath.Join(src, "train")
	if _, err := run(t, "prepare", "--root", flat, "--out", out); err == nil || !strings.Contains(err.Error(), "holds one from an earlier prepare") {
		t.Errorf("class folders into a folder with a test.shard: %v", err)
	}
	flatOut := filepath.Join(dir, "flat")
	got, err = run(t, "prepare", "--root", flat, "--out", flatOut)
	if err != nil || !strings.Contains(got, "note: data.root = "+flat+" holds class folders and no validation folder: only train.shard is written") {
		t.Fatalf("prepare of class folders: %v\n%s", err, got)
	}
	if _, err := os.Stat(filepath.Join(flatOut, "test.shard")); !os.IsNotExist(err) {
		t.Errorf("prepare of class folders wrote a test.shard: %v", err)
	}
	trainOn := func(sets ...string) (string, error) {
		args := []string{"train", "--set", "data.dataset=prepared", "--set", "data.root=" + flatOut, "--set", "model.name=vit_fmnist_patch4_28",
			"--set", "epochs=1", "--set", "data.batch_size=4", "--set", "data.eval_batch_size=4", "--set", "progress=false", "--out", filepath.Join(dir, "run-"+strings.Join(sets, ""))}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		return run(t, args...)
	}
	if _, err := trainOn(); err == nil || !strings.Contains(err.Error(), "holds a training split and no test split: set data.val_split=0.1") {
		t.Errorf("training on train.shard alone without data.val_split: %v", err)
	}
	if got, err := trainOn("data.val_split=0.25"); err != nil || !strings.Contains(got, "held-out accuracy") {
		t.Errorf("training on train.shard alone with data.val_split: %v\n%s", err, got)
	}
}

// writePNG writes a w × h image of one grey level.
func writePNG(t *testing.T, path string, w, h int, level uint8) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	m := image.NewGray(image.Rect(0, 0, w, h))
	for k := range m.Pix {
		m.Pix[k] = level
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, m); err != nil {
		t.Fatal(err)
	}
}
