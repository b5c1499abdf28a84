package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/formats/npy"
	"github.com/vit-train/vit-train/internal/imagetest"
	"github.com/vit-train/vit-train/model"
)

// TestTrainResNetAndWriteLogits trains the ResNet teacher with --model and
// writes its logits over both splits with vit-train logits.
func TestTrainResNetAndWriteLogits(t *testing.T) {
	dir := t.TempDir()
	out, err := run(t, "train", "--model", "resnet20", "--out", dir, "--set", "epochs=1", "--set", "data.train_subset=64",
		"--set", "data.batch_size=32", "--set", "data.eval_subset=50", "--set", "data.eval_batch_size=25", "--set", "progress=false")
	if err != nil || !strings.Contains(out, "model resnet20") || !strings.Contains(out, "test accuracy") {
		t.Fatalf("%v\n%s", err, out)
	}
	ck := filepath.Join(dir, "last.safetensors")
	for _, c := range []struct {
		split string
		n     int
	}{{"train", 64}, {"test", 50}} {
		logitsPath := filepath.Join(dir, c.split+".npy")
		out, err := run(t, "logits", "--checkpoint", ck, "--split", c.split, "--out", logitsPath)
		if err != nil || !strings.Contains(out, "wrote "+logitsPath) {
			t.Fatalf("logits --split %s: %v\n%s", c.split, err, out)
		}
		a, err := npy.ReadFile(logitsPath)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Shape) != 2 || a.Shape[0] != c.n || a.Shape[1] != 10 || len(a.Data) != c.n*10 {
			t.Fatalf("%s: shape %v, %d values", logitsPath, a.Shape, len(a.Data))
		}
	}
	if _, err := run(t, "logits", "--checkpoint", ck, "--split", "val", "--out", filepath.Join(dir, "x.npy")); err == nil || !strings.Contains(err.Error(), "train or test") {
		t.Fatalf("want an error for --split val, got %v", err)
	}
	checkSameDataPath(t, dir, ck, filepath.Join(dir, "test.npy"), 50)
}

// checkSameDataPath checks that eval, predict and logits run a run's
// checkpoint ck through one data path: eval's top-1 over the n test
// images of data.eval_subset is the run's last val_top1 and the top-1 of the logits file
// logitsPath (from `vit-train logits --split test`), and predict's logits for those
// images saved as PNG files are logitsPath's rows.
func checkSameDataPath(t *testing.T, dir, ck, logitsPath string, n int) {
	t.Helper()
	out, err := run(t, "eval", "--checkpoint", ck, "--json", "--out", t.TempDir())
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, out)
	}
	var ev struct {
		N    int
		Top1 float64
	}
	if err := json.Unmarshal([]byte(out), &ev); err != nil || ev.N != n {
		t.Fatalf("eval: %v %+v\n%s", err, ev, out)
	}
	epochs, err := metrics.Read(dir, "epochs")
	if err != nil || len(epochs) == 0 {
		t.Fatalf("epochs log: %v", err)
	}
	if last := epochs[len(epochs)-1]["val_top1"]; math.Abs(last-ev.Top1) > 1e-9 {
		t.Errorf("eval top-1 %.4f, the run's last val_top1 %.4f", ev.Top1, last)
	}
	a, err := npy.ReadFile(logitsPath)
	if err != nil {
		t.Fatal(err)
	}
	logits, shape := a.Data, a.Shape
	full, err := data.EmbeddedFashionMNIST(data.Test)
	if err != nil {
		t.Fatal(err)
	}
	test := data.Subset(full, n) // data.eval_subset's images
	classes, correct := shape[1], 0
	for i := range n {
		_, label, err := test.Item(i)
		if err != nil {
			t.Fatal(err)
		}
		row := logits[i*classes : (i+1)*classes]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		if best == label {
			correct++
		}
	}
	if top1 := 100 * float64(correct) / float64(n); math.Abs(top1-ev.Top1) > 1e-9 {
		t.Errorf("eval top-1 %.4f, the logits file's %.4f", ev.Top1, top1)
	}
	files := writePNGs(t, t.TempDir(), test, 3)
	out, err = run(t, append([]string{"predict", "--checkpoint", ck, "--json", "--logits"}, files...)...)
	if err != nil {
		t.Fatalf("predict: %v\n%s", err, out)
	}
	for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var p prediction
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatal(err)
		}
		for j, v := range p.Logits {
			if want := logits[i*classes+j]; math.Abs(float64(v-want)) > 1e-4*(1+math.Abs(float64(want))) {
				t.Fatalf("predict %s: logit %d is %g, the logits file has %g", files[i], j, v, want)
			}
		}
	}
}

// TestPredictIsLogitsBitForBit checks that predict --logits gives, bit for
// bit, the rows that logits writes for the same JPEG files of odd sizes in
// an image folder: both go through the checkpoint's one evaluation
// preprocessing, with or without --crop-pct and --interpolation, for a
// model that crops (48 px) and one that resizes whole (32 px).
func TestPredictIsLogitsBitForBit(t *testing.T) {
	// JPEG files of odd sizes, wider and taller than they are high, larger
	// and smaller than the models' inputs.
	root := t.TempDir()
	imagetest.JPEGFolder(t, root, "val", [][2]int{{61, 47}, {33, 97}, {129, 71}, {17, 23}, {45, 45}, {99, 31}}, 2, 9)
	imagetest.JPEGFolder(t, root, "train", [][2]int{{40, 41}, {77, 50}}, 2, 10)
	folder, err := data.OpenImageFolderSplit(root, data.Test, data.FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files := folder.Files
	for _, c := range []struct {
		o     model.Overrides
		flags []string
	}{
		{model.Overrides{NumClasses: 2, ImageSize: 48}, nil},
		{model.Overrides{NumClasses: 2, ImageSize: 48}, []string{"--crop-pct", "0.75", "--interpolation", "bilinear"}},
		{model.Overrides{NumClasses: 2}, nil},
	} {
		ck := randomCheckpoint(t, "vit_cifar_patch4_32", c.o)
		npyPath := filepath.Join(t.TempDir(), "test.npy")
		args := []string{"logits", "--checkpoint", ck, "--split", "test", "--out", npyPath, "--set", "data.dataset=imagefolder",
			"--set", "data.root=" + root, "--set", fmt.Sprintf("data.eval_batch_size=%d", len(files)), "--set", "data.workers=1"}
		if out, err := run(t, append(args, c.flags...)...); err != nil {
			t.Fatalf("logits %v: %v\n%s", c.flags, err, out)
		}
		a, err := npy.ReadFile(npyPath)
		if err != nil {
			t.Fatal(err)
		}
		// The last case names the folder rather than its files.
		inputs := files
		if c.flags == nil && c.o.ImageSize == 0 {
			inputs = []string{filepath.Join(root, "val")}
		}
		out, err := run(t, append(append([]string{"predict", "--checkpoint", ck, "--json", "--logits"}, c.flags...), inputs...)...)
		if err != nil {
			t.Fatalf("predict %v: %v\n%s", c.flags, err, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != len(files) {
			t.Fatalf("predict: %d lines for %d files", len(lines), len(files))
		}
		for i, l := range lines {
			var p prediction
			if err := json.Unmarshal([]byte(l), &p); err != nil {
				t.Fatal(err)
			}
			if p.File != files[i] {
				t.Fatalf("predict %v: line %d is %s's, want %s's", inputs, i, p.File, files[i])
			}
			for j, v := range p.Logits {
				if want := a.Data[i*2+j]; math.Float32bits(v) != math.Float32bits(want) {
					t.Fatalf("size %d %v: predict %s: logit %d is %g, logits has %g", c.o.ImageSize, c.flags, files[i], j, v, want)
				}
			}
		}
		// The crop fraction is the checkpoint's, not the run configuration's.
		_, err = run(t, append(args, "--set", "aug.crop_pct=0.5")...)
		if err == nil || !strings.Contains(err.Error(), "change the crop fraction with --crop-pct") {
			t.Errorf("logits --set aug.crop_pct=0.5: %v", err)
		}
	}
}

// TestPredictImageArgs checks how predict's arguments expand: a folder to
// its JPEG and PNG files, in an image folder's order, with a note of the
// image files of other formats; a file as it is; a folder with nothing to
// read is an error.
func TestPredictImageArgs(t *testing.T) {
	root := t.TempDir()
	imagetest.JPEGFolder(t, root, "val", [][2]int{{20, 20}, {30, 20}}, 2, 1)
	val := filepath.Join(root, "val")
	folder, err := data.OpenImageFolder(val, data.FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	webp := filepath.Join(val, folder.Classes()[1], "phone.webp")
	if err := os.WriteFile(webp, []byte("RIFF"), 0o644); err != nil {
		t.Fatal(err)
	}
	var notes bytes.Buffer
	got, err := imageArgs([]string{"a.jpg", val}, &notes)
	if want := append([]string{"a.jpg"}, folder.Files...); err != nil || !slices.Equal(got, want) {
		t.Errorf("imageArgs: %q, %v; want %q", got, err, want)
	}
	if want := "note: " + val + ": 1 image file of a format vit-train does not read (.webp: 1) is left out; convert it to JPEG or PNG to use it: " + webp + "\n"; notes.String() != want {
		t.Errorf("note %q, want %q", notes.String(), want)
	}
	empty := t.TempDir()
	if _, err := imageArgs([]string{empty}, &notes); err == nil || !strings.Contains(err.Error(), empty+": a folder with no JPEG or PNG file under it") {
		t.Errorf("an empty folder: %v", err)
	}
}
