package main

import (
	"encoding/json"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// bench --data trains on the run's data through its loader and reports
// the steps' wait for it: most of a tiny model's step when every image is
// a large PNG decoded by one worker.
func TestBenchData(t *testing.T) {
	root := t.TempDir()
	m := image.NewRGBA(image.Rect(0, 0, 1200, 1200))
	rng := rand.New(rand.NewPCG(1, 2))
	for k := range m.Pix {
		m.Pix[k] = uint8(rng.IntN(256))
	}
	f, err := os.CreateTemp(t.TempDir(), "*.png")
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, m); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, split := range []string{"train", "val"} {
		for _, class := range []string{"a", "b"} {
			for _, name := range []string{"1.png", "2.png", "3.png", "4.png"} {
				writeFileAll(t, filepath.Join(root, split, class, name), b)
			}
		}
	}
	out, err := run(t, "bench", "--model", "vit_fmnist_patch4_28", "--in-chans", "3", "--num-classes", "2", "--batch", "4", "--steps", "2", "--data", "--json",
		"--set", "data.dataset=imagefolder", "--set", "data.root="+root, "--set", "data.workers=1", "--set", "aug.train=rrc-flip")
	if err != nil {
		t.Fatal(err)
	}
	var r benchResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Data != "imagefolder" || r.DataWorkers != 1 || !(r.DataWaitShare > 0.3 && r.DataWaitShare <= 1) || r.DataWaitMsPerStep > r.TrainMsPerStep {
		t.Errorf("bench --data: data %q, %d workers, waited %.1f ms of %.1f (share %.3f)", r.Data, r.DataWorkers, r.DataWaitMsPerStep, r.TrainMsPerStep, r.DataWaitShare)
	}
	// Without --in-chans and --num-classes the model takes the data's, as
	// training's does, and says so.
	out, err = run(t, "bench", "--model", "vit_fmnist_patch4_28", "--batch", "4", "--steps", "1", "--data", "--json",
		"--set", "data.dataset=imagefolder", "--set", "data.root="+root, "--set", "data.workers=1")
	if err != nil {
		t.Fatal(err)
	}
	var fitted benchResult
	if err := json.Unmarshal([]byte(out), &fitted); err != nil {
		t.Fatal(err)
	}
	if want := "model.in_chans = 3 (the model's 1), model.num_classes = 2 (the model's 10), from the data"; fitted.DataFit != want || fitted.Params != r.Params {
		t.Errorf("bench --data fitted the model with %q to %d params; want %q and %d", fitted.DataFit, fitted.Params, want, r.Params)
	}
}

func writeFileAll(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
