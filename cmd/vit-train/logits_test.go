package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/distill"
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
		npy := filepath.Join(dir, c.split+".npy")
		out, err := run(t, "logits", "--checkpoint", ck, "--split", c.split, "--out", npy)
		if err != nil || !strings.Contains(out, "wrote "+npy) {
			t.Fatalf("logits --split %s: %v\n%s", c.split, err, out)
		}
		data, shape, err := distill.ReadNPY(npy)
		if err != nil || len(shape) != 2 || shape[0] != c.n || shape[1] != 10 || len(data) != c.n*10 {
			t.Fatalf("%s: shape %v, %d values, %v", npy, shape, len(data), err)
		}
	}
	if _, err := run(t, "logits", "--checkpoint", ck, "--split", "val", "--out", filepath.Join(dir, "x.npy")); err == nil || !strings.Contains(err.Error(), "train or test") {
		t.Fatalf("want an error for --split val, got %v", err)
	}
	if _, err := run(t, "eval", "--checkpoint", ck); err == nil || !strings.Contains(err.Error(), "not a ViT") {
		t.Fatalf("eval of a ResNet checkpoint: want a clear error, got %v", err)
	}
}
