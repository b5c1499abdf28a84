package train

import (
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/data"
)

// openTestSource opens the batch source of cfg (no teacher) and inputs to
// fill: images (B, C, H, W) and targets (B, classes).
func openTestSource(t *testing.T, cfg Config) (*BatchSource, Inputs) {
	t.Helper()
	ds, err := OpenDatasets(cfg.Data)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cfg.ModelSpec()
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewBatchSource(cfg, ds, spec, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	ch, size := spec.Input()
	b, classes := cfg.Data.BatchSize, spec.NumClasses()
	return src, Inputs{Images: make([]float32, b*ch*size*size), Targets: make([]float32, b*classes), Classes: classes}
}

// A batch source ends with its epoch, naming it; with Repeat it goes on
// into the next epoch, whose first batch is the one Seek gives.
func TestBatchSourceEpochs(t *testing.T) {
	cfg := tinyConfig(t, "aug.mixup=0.8") // 6 batches of 16 images per epoch
	plain, in := openTestSource(t, cfg)
	for range plain.NumBatches() {
		if n, err := plain.Fill(in); err != nil || n != 16 {
			t.Fatalf("%d images, %v", n, err)
		}
	}
	if _, err := plain.Fill(in); err == nil || !strings.Contains(err.Error(), "epoch 1 ended at batch 6") {
		t.Fatalf("a 7th batch of an epoch of 6: got %v, want an error naming epoch 1, batch 6", err)
	}

	repeat, in := openTestSource(t, cfg)
	repeat.Repeat = true
	for range repeat.NumBatches() + 1 {
		if _, err := repeat.Fill(in); err != nil {
			t.Fatal(err)
		}
	}
	sought, want := openTestSource(t, cfg)
	sought.Seek(1, 0)
	if _, err := sought.Fill(want); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(in.Images, want.Images) || !slices.Equal(in.Targets, want.Targets) {
		t.Fatal("the batch after an epoch with Repeat is not the next epoch's first")
	}
}

// TestBatchLargerThanTheData checks that a batch larger than the training
// images, or than one process's share of them, is an error that says
// which size would do.
func TestBatchLargerThanTheData(t *testing.T) {
	full, err := data.EmbeddedFashionMNIST(data.Train)
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Subset(full, 18)
	for _, c := range []struct {
		ranks int
		want  string
	}{
		{1, "data.batch_size = 32 is larger than the 18 training images: set data.batch_size = 18 or less"},
		{2, "data.batch_size = 32 is larger than the 9 of the 18 training images that each of the 2 processes reads: set data.batch_size = 9 or less"},
	} {
		l, err := data.NewLoader(data.LoaderConfig{Dataset: ds, BatchSize: 32, DropLast: true, Replicas: c.ranks})
		if err != nil {
			t.Fatal(err)
		}
		if err := checkHoldsABatch(DataConfig{BatchSize: 32}, l, ds.Len(), c.ranks); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d process(es): %v", c.ranks, err)
		}
	}
}
