package train

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/model/vit"
)

// smallConfig trains the default model on a few hundred embedded images.
func smallConfig(t *testing.T, sets ...string) Config {
	t.Helper()
	base := []string{"data.train_subset=384", "data.eval_subset=200", "data.batch_size=64", "data.eval_batch_size=100",
		"epochs=2", "progress=false", "log_every=1", "sched.warmup_epochs=0.5", "model.drop_path_rate=0.1"}
	cfg, err := loadConfig("", append(base, sets...))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func readSteps(t *testing.T, dir string) []map[string]float64 {
	t.Helper()
	recs, err := metrics.Read(dir, "steps")
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestInterruptSavesAResumableCheckpoint(t *testing.T) {
	cfg := smallConfig(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // as if Ctrl-C came before the first batch
	sum, err := Run(ctx, cfg, Options{Dir: dir})
	if !errors.Is(err, ErrInterrupted) || !sum.Interrupted {
		t.Fatalf("want ErrInterrupted, got %v", err)
	}
	ck, err := LoadCheckpoint(filepath.Join(dir, LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if ck.State.Step != 0 || ck.Config == nil || !reflect.DeepEqual(*ck.Config, cfg) {
		t.Fatalf("checkpoint state %+v", ck.State)
	}
	// A fresh run refuses to overwrite it.
	if _, err := Run(context.Background(), cfg, Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "already holds a checkpoint") {
		t.Fatalf("want a refusal to overwrite, got %v", err)
	}
	// A resume with another model is refused and changes nothing.
	before, _ := os.ReadFile(filepath.Join(dir, LastCheckpoint))
	other := smallConfig(t, "model.name=vit_cifar_patch4_32", "model.img_size=28", "model.in_chans=1")
	if _, err := Run(context.Background(), other, Options{Dir: dir, Resume: true}); err == nil || !strings.Contains(err.Error(), "differs from the configured one") {
		t.Fatalf("want a config mismatch error, got %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, LastCheckpoint))
	if string(before) != string(after) {
		t.Fatal("a refused resume changed the checkpoint")
	}
}

func TestNonFiniteLossStopsTheRun(t *testing.T) {
	cfg := smallConfig(t, "optim.lr=1e12", "sched.name=constant", "sched.warmup_epochs=0", "epochs=3")
	dir := t.TempDir()
	_, err := Run(context.Background(), cfg, Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "loss is") || !strings.Contains(err.Error(), "step") {
		t.Fatalf("want a non-finite loss error naming the step, got %v", err)
	}
}

func TestTruncatedCheckpointIsAnError(t *testing.T) {
	cfg := smallConfig(t, "epochs=1")
	dir := t.TempDir()
	if _, err := Run(context.Background(), cfg, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, LastCheckpoint)
	raw, _ := os.ReadFile(path)
	bad := filepath.Join(t.TempDir(), "cut.safetensors")
	if err := os.WriteFile(bad, raw[:len(raw)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCheckpoint(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("want an error naming the truncated file, got %v", err)
	}
	ck, err := LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	// Wrong shapes: a model with another embedding width.
	mc := ck.Spec.Config.(vit.Config)
	mc.EmbedDim, mc.Heads = 32, 4
	m, err := newModel(mc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ck.LoadWeights(m, false); err == nil || !strings.Contains(err.Error(), "has shape") {
		t.Fatalf("want a shape mismatch error, got %v", err)
	}
	// Another architecture: one block fewer.
	mc = ck.Spec.Config.(vit.Config)
	mc.Depth = 3
	m, _ = newModel(mc)
	if _, err := ck.LoadWeights(m, false); err == nil || !strings.Contains(err.Error(), `"blocks.3.`) {
		t.Fatalf("want an unexpected-tensor error, got %v", err)
	}
}

func TestAfterEpochRunsOncePerEpochAndOnlyWarns(t *testing.T) {
	cfg := smallConfig(t, "data.train_subset=128", "data.eval_subset=100")
	dir := t.TempDir()
	var calls []string
	var epochsSeen []int
	hook := func(d string) error {
		calls = append(calls, d)
		recs, err := metrics.Read(d, "epochs")
		if err != nil {
			return err
		}
		epochsSeen = append(epochsSeen, len(recs))
		return errors.New("disk on fire")
	}
	var out strings.Builder
	if _, err := Run(context.Background(), cfg, Options{Dir: dir, Out: &out, AfterEpoch: hook}); err != nil {
		t.Fatalf("a failing hook stopped the run: %v", err)
	}
	if len(calls) != cfg.Epochs || calls[0] != dir {
		t.Fatalf("hook called with %v, want %d calls with %s", calls, cfg.Epochs, dir)
	}
	// The hook sees each epoch's record already written.
	for i, n := range epochsSeen {
		if n != i+1 {
			t.Fatalf("call %d saw %d epoch records, want %d", i, n, i+1)
		}
	}
	if got := strings.Count(out.String(), "warning: after epoch"); got != cfg.Epochs || !strings.Contains(out.String(), "disk on fire") {
		t.Fatalf("printed %d warnings, want %d naming the error:\n%s", got, cfg.Epochs, out.String())
	}
}
