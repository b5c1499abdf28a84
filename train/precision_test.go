package train

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/nn/blas"
)

func TestPrecisionSetting(t *testing.T) {
	for _, p := range []string{"", "fp32"} {
		if v, err := (ModelConfig{Precision: p}).Products(); err != nil || !v.IsFP32() {
			t.Errorf("model.precision = %q: %v, %v; want fp32", p, v, err)
		}
	}
	_, err := loadConfig("", []string{"model.precision=half"})
	if err == nil || !strings.Contains(err.Error(), `model.precision = "half"`) {
		t.Errorf("model.precision=half: error %v, want one naming the setting", err)
	}
	v, err := (ModelConfig{Precision: "mixed"}).Products()
	if blas.Mixed().IsFP32() {
		if err == nil || !strings.Contains(err.Error(), "model.precision = mixed") {
			t.Errorf("mixed with no fast low-precision product here: %v, %v; want an error naming the setting", v, err)
		}
		return
	}
	if err != nil || v != blas.Mixed() {
		t.Errorf("mixed: %v, %v; want %s", v, err, blas.Mixed())
	}
	t.Logf("model.precision = mixed runs %s products here", v)
}

// TestMixedUnavailableNamesTheProcessor runs this test binary again with
// VIT_TRAIN_LOWP=none, so that no low-precision product is chosen, and
// checks that model.precision = mixed is an error naming the setting and
// the processor there.
func TestMixedUnavailableNamesTheProcessor(t *testing.T) {
	if os.Getenv("VIT_TRAIN_TEST_MIXED_CHILD") == "1" {
		_, err := loadConfig("", []string{"model.precision=mixed"})
		if err == nil {
			t.Fatal("model.precision=mixed accepted with VIT_TRAIN_LOWP=none")
		}
		os.Stdout.WriteString("ERROR: " + err.Error() + "\n")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMixedUnavailableNamesTheProcessor$", "-test.v")
	cmd.Env = append(os.Environ(), "VIT_TRAIN_LOWP=none", "VIT_TRAIN_TEST_MIXED_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	msg := string(out)
	if !strings.Contains(msg, "ERROR: config: model.precision = mixed:") || !strings.Contains(msg, "has no low-precision matrix product") {
		t.Fatalf("child's error does not name the setting:\n%s", msg)
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil && strings.Contains(string(data), "model name") && strings.Contains(msg, "this processor") {
		t.Errorf("the error does not name the processor:\n%s", msg)
	}
}

// A run with model.precision = mixed trains (finite losses, the run
// completes) and ends with other weights than the float32 run: its
// products took effect.
func TestMixedPrecisionTrains(t *testing.T) {
	if blas.Mixed().IsFP32() {
		t.Skip("no low-precision product faster than float32 on this processor: mixed precision not run")
	}
	t.Logf("mixed precision runs %s products", blas.Mixed())
	sets := []string{"ema.enabled=true"}
	plain, mixed := t.TempDir(), t.TempDir()
	if _, err := runStopping(t, tinyConfig(t, sets...), plain); err != nil {
		t.Fatal(err)
	}
	if _, err := runStopping(t, tinyConfig(t, append(sets, "model.precision=mixed")...), mixed); err != nil {
		t.Fatal(err)
	}
	a, err := LoadCheckpoint(filepath.Join(plain, LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadCheckpoint(filepath.Join(mixed, LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	differ := false
	for i, p := range a.Params {
		for j, x := range p.Data {
			if y := b.Params[i].Data[j]; y != y || y-y != 0 {
				t.Fatalf("%s[%d] = %v after mixed-precision training", p.Name, j, y)
			} else if x != y {
				differ = true
			}
		}
	}
	if !differ {
		t.Error("mixed-precision training ended with the float32 run's weights bit for bit")
	}
	// Evaluation opens the checkpoint in its run's precision: the loss
	// differs from the float32 evaluation's, by a little.
	loss := map[string]float64{}
	for _, p := range []string{"mixed", "fp32"} {
		r, err := OpenEval(filepath.Join(mixed, LastCheckpoint), EvalOptions{Sets: []string{"model.precision=" + p}})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := Evaluate(context.Background(), r.Graph, r.Loader)
		if err != nil {
			t.Fatal(err)
		}
		loss[p] = ev.Loss
	}
	if d := math.Abs(loss["mixed"] - loss["fp32"]); d == 0 || d > 0.05*loss["fp32"] {
		t.Errorf("evaluation loss %v in mixed precision, %v in float32", loss["mixed"], loss["fp32"])
	}
}
