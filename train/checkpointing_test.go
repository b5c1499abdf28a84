package train

import (
	"path/filepath"
	"strings"
	"testing"
)

// model.grad_checkpointing recomputes activations without changing a bit
// of the run: weights, optimiser state and EMA match a run without it, with
// drop-path and dropout on.
func TestGradCheckpointingKeepsTheRun(t *testing.T) {
	sets := []string{"model.drop_path_rate=0.1", "model.drop_rate=0.1", "ema.enabled=true"}
	plain, ckpt := t.TempDir(), t.TempDir()
	if _, err := runStopping(t, tinyConfig(t, sets...), plain); err != nil {
		t.Fatal(err)
	}
	if _, err := runStopping(t, tinyConfig(t, append(sets, "model.grad_checkpointing=true")...), ckpt); err != nil {
		t.Fatal(err)
	}
	sameCheckpoints(t, filepath.Join(plain, LastCheckpoint), filepath.Join(ckpt, LastCheckpoint))
}

func TestGradCheckpointingNeedsEncoderBlocks(t *testing.T) {
	cfg := tinyConfig(t, "model.name=resnet20", "model.grad_checkpointing=true")
	_, err := newTrainer(cfg, Options{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "model.grad_checkpointing") {
		t.Fatalf("a ResNet with model.grad_checkpointing: got %v, want an error naming the key", err)
	}
}
