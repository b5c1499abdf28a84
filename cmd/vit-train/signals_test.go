package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vit-train/vit-train/train"
)

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{errors.New("config: bad"), 1},
		{&signalError{sig: syscall.SIGINT, msg: "interrupted"}, 130},
		{fmt.Errorf("wrapped: %w", &signalError{sig: syscall.SIGTERM, msg: "interrupted"}), 143},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	out, err := run(t, "train", "--help")
	if err != nil || !strings.Contains(out, "130 after SIGINT") || !strings.Contains(out, "143 after") {
		t.Fatalf("train --help does not document the exit status:\n%s", out)
	}
}

// buildBinary builds vit-train into a temporary folder.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "vit-train")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// lines counts the lines of a file, 0 if it does not exist.
func lines(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}

// TestSignalsStopTrainingWithTheirExitStatus sends SIGINT, then SIGTERM, to
// a training run with gradient accumulation: each stops it at an optimiser
// step with a checkpoint and exits 130 or 143; a config error exits 1; the
// last resume finishes and exits 0.
func TestSignalsStopTrainingWithTheirExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	args := []string{"train", "--out", dir, "--set", "data.train_subset=256", "--set", "data.batch_size=16",
		"--set", "data.eval_subset=64", "--set", "data.eval_batch_size=64", "--set", "epochs=4",
		"--set", "progress=false", "--set", "log_every=1", "--set", "optim.accum_steps=2"}
	steps := filepath.Join(dir, "steps.jsonl")
	for i, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmdArgs := args
		if i > 0 {
			cmdArgs = append(cmdArgs, "--resume")
		}
		cmd := exec.Command(bin, cmdArgs...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		before := lines(steps)
		deadline := time.Now().Add(60 * time.Second)
		for lines(steps) < before+2 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
			t.Fatalf("%v: want exit status %d, got %v\n%s", sig, 128+int(sig), err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "checkpoint saved") || !strings.Contains(stderr.String(), "--resume") {
			t.Fatalf("%v: the output does not report the checkpoint:\n%s", sig, stderr.String())
		}
		ck, err := train.LoadCheckpoint(filepath.Join(dir, train.LastCheckpoint))
		if err != nil {
			t.Fatal(err)
		}
		if ck.State.Step == 0 || ck.State.Batch%2 != 0 {
			t.Fatalf("%v: checkpoint at %+v, want a whole optimiser step after the first", sig, ck.State)
		}
	}
	err := exec.Command(bin, append(args, "--resume", "--set", "ema.decay=0.9")...).Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("a config error: want exit status 1, got %v", err)
	}
	if out, err := exec.Command(bin, append(args, "--resume")...).CombinedOutput(); err != nil {
		t.Fatalf("the last resume: %v\n%s", err, out)
	}
}

func TestMpirunCtrlCNote(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		env  func(string) string
		want string
	}{
		{env(), ""}, // not under Open MPI
		{env("OMPI_COMM_WORLD_SIZE", "2"), "is 1 (the default) s"},
		{env("OMPI_COMM_WORLD_SIZE", "2", "OMPI_MCA_odls_base_sigkill_timeout", "5"), "is 5 s"},
		{env("OMPI_COMM_WORLD_SIZE", "2", "OMPI_MCA_odls_base_sigkill_timeout", "60"), ""},
	} {
		got := mpirunCtrlCNote(c.env)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("note %q, want one containing %q", got, c.want)
		}
	}
}
