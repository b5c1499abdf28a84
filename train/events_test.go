package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/formats/tfevents"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// copyFile copies src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runSteps runs cfg in dir (resuming when it holds a checkpoint) until
// stop steps (0: to the end).
func runSteps(t *testing.T, cfg Config, dir string, stop int) {
	t.Helper()
	_, err := os.Stat(filepath.Join(dir, LastCheckpoint))
	_, err = Run(context.Background(), cfg, Options{Dir: dir, Resume: err == nil, Hooks: Hooks{At: StopAfterSteps(stop)}})
	if err != nil && !(stop > 0 && errors.Is(err, ErrInterrupted)) {
		t.Fatal(err)
	}
}

// eventScalars reads the scalars of dir's event files by "tag@step",
// failing on a (tag, step) that shows twice, and returns the texts of
// the config tag by step.
func eventScalars(t *testing.T, dir string) (scalars map[string]float32, configs map[int64]string, files int) {
	t.Helper()
	paths, err := tfevents.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	scalars, configs = map[string]float32{}, map[int64]string{}
	seen := map[string]bool{}
	for _, p := range paths {
		f, err := tfevents.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range f.Events[1:] {
			for _, v := range e.Values {
				key := fmt.Sprintf("%s@%d", v.Tag, e.Step)
				if seen[key] {
					t.Fatalf("%s: %s shows twice", p, key)
				}
				seen[key] = true
				switch v.Kind {
				case tfevents.Scalar:
					scalars[key] = v.Scalar
				case tfevents.Text:
					if v.Tag != configTag {
						t.Fatalf("%s: text %s", p, key)
					}
					configs[e.Step] = v.Text
				default:
					t.Fatalf("%s: %s is neither a scalar nor a text", p, key)
				}
			}
		}
	}
	return scalars, configs, len(paths)
}

// checkEvents fails unless dir's event files hold its steps and epochs
// logs' values, each once, and config.yaml as the latest config text.
func checkEvents(t *testing.T, dir string) (files int) {
	t.Helper()
	scalars, configs, files := eventScalars(t, dir)
	want := 0
	for _, log := range []struct{ name, key string }{{"steps", "step"}, {"epochs", "epoch"}} {
		recs, err := metrics.Read(dir, log.name)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			for field, v := range r {
				if field == log.key || math.IsNaN(v) {
					continue
				}
				want++
				key := fmt.Sprintf("%s/%s@%d", log.name, field, int64(r[log.key]))
				got, ok := scalars[key]
				if !ok || got != float32(v) {
					t.Fatalf("%s: event %v (present %v), %s.csv %v", key, got, ok, log.name, v)
				}
			}
		}
	}
	if len(scalars) != want {
		t.Fatalf("%d scalar events, the logs hold %d values", len(scalars), want)
	}
	latest := int64(-1)
	for s := range configs {
		latest = max(latest, s)
	}
	y, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := configs[latest]; got != "```yaml\n"+string(y)+"```\n" {
		t.Fatalf("config text at step %d:\n%s\nconfig.yaml:\n%s", latest, got, y)
	}
	return files
}

// TestEventsAcrossResume trains a run that is stopped at step 4, resumed
// past the end of its first epoch to step 9 and then thrown back to its
// step-4 checkpoint with a partial record at the end of its event file (a
// kill during a write, the checkpoint of step 9 lost), and resumed to the
// end: the event files must hold the logs' values, each step once, and
// the Python check, reading them with TensorBoard's protobuf schema, must
// agree.
func TestEventsAcrossResume(t *testing.T) {
	cfg := tinyConfig(t, "tensorboard=true", "epochs=3", "ema.enabled=true", "ema.decay=0.9")
	dir := t.TempDir()
	runSteps(t, cfg, dir, 4)
	saved := filepath.Join(t.TempDir(), "step4.safetensors")
	copyFile(t, filepath.Join(dir, LastCheckpoint), saved)
	runSteps(t, cfg, dir, 9)
	if n := checkEvents(t, dir); n != 2 {
		t.Fatalf("%d event files after a resume, want 2", n)
	}
	copyFile(t, saved, filepath.Join(dir, LastCheckpoint))
	files, err := tfevents.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	last := files[len(files)-1]
	tenth, err := tfevents.Event{Step: 10, Values: []tfevents.Value{tfevents.ScalarValue("steps/loss", 1)}}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	partial := tfevents.AppendRecord(nil, tenth)
	partial = partial[:len(partial)-5]
	f, err := os.OpenFile(last, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(partial); err != nil {
		t.Fatal(err)
	}
	f.Close()
	checkTFEventsScript(t, dir, true)

	var out strings.Builder
	if _, err := Run(context.Background(), cfg, Options{Dir: dir, Resume: true, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "dropped a partial last record") {
		t.Errorf("the resumed run did not note the partial record:\n%s", out.String())
	}
	if _, err := os.Stat(last); !os.IsNotExist(err) {
		t.Errorf("the event file of the run thrown back to its start is still there: %v", err)
	}
	if n := checkEvents(t, dir); n != 2 {
		t.Fatalf("%d event files, want 2 (the first run's and the last resume's)", n)
	}
	if steps := readSteps(t, dir); len(steps) != 18 {
		t.Fatalf("%d step records, want 18", len(steps))
	}
	checkTFEventsScript(t, dir, true)

	// The check fails on a value that differs and on a step shown twice.
	bad := t.TempDir()
	for _, name := range []string{"steps.csv", "epochs.csv", "config.yaml"} {
		copyFile(t, filepath.Join(dir, name), filepath.Join(bad, name))
	}
	files, _ = tfevents.Files(dir)
	for _, p := range files {
		copyFile(t, p, filepath.Join(bad, filepath.Base(p)))
	}
	csv, _ := os.ReadFile(filepath.Join(bad, "epochs.csv"))
	lines := strings.Split(string(csv), "\n")
	cells := strings.Split(lines[2], ",")
	cells[3] = "12345" // val_loss of the second epoch
	lines[2] = strings.Join(cells, ",")
	if err := os.WriteFile(filepath.Join(bad, "epochs.csv"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	checkTFEventsScript(t, bad, false)
	copyFile(t, filepath.Join(dir, "epochs.csv"), filepath.Join(bad, "epochs.csv"))
	checkTFEventsScript(t, bad, true)
	copyFile(t, files[0], filepath.Join(bad, tfevents.FilePrefix+"9999999999.copy"))
	checkTFEventsScript(t, bad, false)
}

// checkTFEventsScript runs scripts/check_tfevents.py on dir, as a subtest
// that is skipped when protoc, python3-protobuf or python3-crc32c is
// missing, and fails unless the check passes (pass) or fails.
func checkTFEventsScript(t *testing.T, dir string, pass bool) {
	t.Helper()
	t.Run("check_tfevents.py", func(t *testing.T) {
		const python = "/usr/bin/python3"
		if _, err := exec.LookPath("protoc"); err != nil {
			t.Skip("protoc is missing (Debian: apt-get install protobuf-compiler): the event files are not read with TensorBoard's schema")
		}
		if out, err := exec.Command(python, "-c", "import google.protobuf, crc32c").CombinedOutput(); err != nil {
			t.Skipf("%s cannot import google.protobuf and crc32c (Debian: apt-get install python3-protobuf python3-crc32c): %v\n%s", python, err, out)
		}
		out, err := exec.Command(python, "../scripts/check_tfevents.py", dir).CombinedOutput()
		var ee *exec.ExitError
		switch {
		case pass && err != nil:
			t.Fatalf("check_tfevents.py %s: %v\n%s", dir, err, out)
		case !pass && !(errors.As(err, &ee) && ee.ExitCode() == 1):
			t.Fatalf("check_tfevents.py %s passed a folder it should fail (%v)\n%s", dir, err, out)
		}
		t.Logf("%s", out)
	})
}

func TestKeepEvent(t *testing.T) {
	at := checkpoint.State{Epoch: 2, Step: 30}
	scalar := func(tag string, step int64) tfevents.Event {
		return tfevents.Event{Step: step, Values: []tfevents.Value{tfevents.ScalarValue(tag, 1)}}
	}
	for _, c := range []struct {
		e    tfevents.Event
		keep bool
	}{
		{scalar("steps/loss", 30), true},
		{scalar("steps/loss", 31), false},
		{scalar("epochs/val_top1", 2), true},
		{scalar("epochs/val_top1", 3), false},
		{tfevents.Event{Step: 29, Values: []tfevents.Value{tfevents.TextValue(configTag, "a")}}, true},
		{tfevents.Event{Step: 30, Values: []tfevents.Value{tfevents.TextValue(configTag, "a")}}, false},
		{scalar("other", 1000), true},
	} {
		if got := keepEvent(c.e, at); got != c.keep {
			t.Errorf("%s at step %d: keep %v, want %v", c.e.Values[0].Tag, c.e.Step, got, c.keep)
		}
	}
}

// TestFreshRunRemovesEventFiles: a fresh run removes event files left by
// a run stopped before its first checkpoint, and without the tensorboard
// setting writes none.
func TestFreshRunRemovesEventFiles(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, tfevents.FilePrefix+"1.vit-train")
	if err := os.WriteFile(stale, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	runSteps(t, tinyConfig(t), dir, 2)
	if files, err := tfevents.Files(dir); err != nil || len(files) != 0 {
		t.Fatalf("event files %v, %v; want none", files, err)
	}
}

func TestEventLogRefusesARecordWithoutItsKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), tfevents.FilePrefix+"1.vit-train")
	l, err := openEventLog(path, []byte("a: 1\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	if err := l.write("steps", "step", []metrics.Field{{Name: "loss", Value: 1}}); err == nil || !strings.Contains(err.Error(), `"step"`) {
		t.Fatalf("a record without its step: %v", err)
	}
}
