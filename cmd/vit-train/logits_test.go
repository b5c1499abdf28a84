package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/formats/npy"
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
// checkpoint ck through one data path: eval's top-1 over the first n test
// images is the run's last val_top1 and the top-1 of the logits file
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
	test, err := data.EmbeddedFashionMNIST(data.Test)
	if err != nil {
		t.Fatal(err)
	}
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
	files := writeTestPNGs(t, t.TempDir(), 3)
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
