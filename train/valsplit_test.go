package train

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// data.val_split outside [0, 1), or data.val_seed without a split, is
// refused naming the key and the value.
func TestValSplitIsValidated(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"data.val_split=1"}, "config: data.val_split = 1: must be a fraction in [0, 1)"},
		{[]string{"data.val_split=-0.1"}, "config: data.val_split = -0.1: must be a fraction in [0, 1)"},
		{[]string{"data.val_seed=3"}, "config: data.val_seed = 3 has no effect: data.val_split = 0 holds nothing out"},
	} {
		if _, err := loadConfig("", c.sets); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: want an error containing %q, got %v", c.sets, c.want, err)
		}
	}
	if _, err := loadConfig("", []string{"data.val_split=0.1", "data.val_seed=3"}); err != nil {
		t.Errorf("a valid split: %v", err)
	}
	// A fraction that leaves a part empty is refused when the data opens.
	cfg, err := loadConfig("", []string{"data.val_split=0.00001"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDatasets(cfg.Data); err == nil || !strings.Contains(err.Error(), "config: data.val_split = 1e-05: data: held-out fraction") {
		t.Errorf("a split of no image: %v", err)
	}
}

// With data.val_split the run trains on the rest of the training set and
// validates on the held-out part, the test set untouched; the split
// follows data.val_seed, not the run's seed.
func TestValSplitHoldsOutPartOfTheTrainingSet(t *testing.T) {
	open := func(sets ...string) *Datasets {
		t.Helper()
		cfg, err := loadConfig("", sets)
		if err != nil {
			t.Fatal(err)
		}
		d, err := OpenDatasets(cfg.Data)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	whole := open()
	d := open("data.val_split=0.15")
	n := whole.Train.Len()
	if d.Eval.Len() != len(d.HeldOut) || len(d.HeldOut) == 0 || d.Train.Len()+d.Eval.Len() != n {
		t.Fatalf("%d training and %d validation images of %d", d.Train.Len(), d.Eval.Len(), n)
	}
	for i, j := range d.HeldOut[:5] {
		got, gl, err := d.Eval.Item(i)
		want, wl, _ := whole.Train.Item(j)
		if err != nil || gl != wl || !slices.Equal(got.Pix, want.Pix) {
			t.Fatalf("validation image %d is not training image %d", i, j)
		}
	}
	if again := open("data.val_split=0.15", "seed=5"); !slices.Equal(again.HeldOut, d.HeldOut) {
		t.Error("the run's seed changed the split")
	}
	if other := open("data.val_split=0.15", "data.val_seed=1"); slices.Equal(other.HeldOut, d.HeldOut) {
		t.Error("data.val_seed did not change the split")
	}
	if whole.HeldOut != nil || whole.Eval.Len() == d.Eval.Len() {
		t.Error("without a split the run validates on the test set")
	}
	// The test set, once: a split run's configuration with the split off.
	cfg, err := loadConfig("", []string{"data.val_split=0.15", "data.val_seed=4"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = evalConfig(cfg, []string{"data.val_split=0"}); err != nil {
		t.Fatalf("eval --set data.val_split=0: %v", err)
	}
	if test, err := OpenDatasets(cfg.Data); err != nil || test.HeldOut != nil || test.Eval.Len() != whole.Eval.Len() {
		t.Errorf("with the split off: %v", err)
	}
}

// The run folder lists the held-out images.
func TestValSplitIsRecordedInTheRunFolder(t *testing.T) {
	cfg := smallConfig(t, "data.val_split=0.25", "data.val_seed=9")
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, cfg, Options{Dir: dir}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want ErrInterrupted, got %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, HeldOutFile))
	if err != nil {
		t.Fatal(err)
	}
	var rec heldOutRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDatasets(cfg.Data)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Fraction != 0.25 || rec.Seed != 9 || !slices.Equal(rec.Indices, d.HeldOut) || rec.ValImages != len(d.HeldOut) ||
		rec.TrainImages != d.Train.Len() || rec.Evaluated != d.Eval.Len() || rec.Evaluated != 200 {
		t.Errorf("record %+v (held out %d, training %d, evaluated %d)", rec, len(d.HeldOut), d.Train.Len(), d.Eval.Len())
	}
	// Without a split there is no record.
	dir = t.TempDir()
	if _, err := Run(ctx, smallConfig(t), Options{Dir: dir}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, HeldOutFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a run on the test set wrote %s: %v", HeldOutFile, err)
	}
}
