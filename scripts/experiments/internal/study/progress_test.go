package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A study killed while vit-train runs leaves a progress record, which the
// next attempt moves into the attempts log once.
func TestInterruptedAttemptIsRecovered(t *testing.T) {
	dir := t.TempDir()
	r := Run{ID: "x/seed0", Dir: filepath.Join(dir, "x", "seed0")}
	if err := os.MkdirAll(filepath.Dir(r.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	busy := exec.Command("sh", "-c", "while :; do :; done")
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	defer busy.Process.Kill()
	time.Sleep(300 * time.Millisecond)
	a := Attempt{Start: time.Now().Add(-time.Second), Args: []string{"train", "--out", r.Dir}}
	recordProgress(r, a, busy.Process.Pid)
	cpu, err := processCPUSeconds(busy.Process.Pid)
	if err != nil || cpu <= 0 {
		t.Fatalf("CPU time of a busy process: %v, %v", cpu, err)
	}

	for range 2 { // the second finds nothing to do
		if err := recoverInterrupted(r); err != nil {
			t.Fatal(err)
		}
	}
	atts, err := readAttempts(r.attemptsFile())
	if err != nil || len(atts) != 1 {
		t.Fatalf("attempts %+v, %v", atts, err)
	}
	got := atts[0]
	if !got.Interrupted || !got.Start.Equal(a.Start) || got.WallS < 1 || got.CPUS <= 0 || got.CPUS > cpu {
		t.Errorf("recovered %+v (CPU now %v)", got, cpu)
	}
	if _, err := os.Stat(r.progressFile()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("progress record left: %v", err)
	}

	// Killed after the attempt was logged but before its progress record
	// was removed: not logged twice.
	recordProgress(r, a, busy.Process.Pid)
	if err := recoverInterrupted(r); err != nil {
		t.Fatal(err)
	}
	if atts, _ := readAttempts(r.attemptsFile()); len(atts) != 1 {
		t.Errorf("%d attempts after a second record of the same one", len(atts))
	}
}

func TestStartUnrecorded(t *testing.T) {
	fresh := Done{Attempts: []Attempt{{Args: []string{"train", "--config", "c.yaml"}}, {Args: []string{"train", "--out", "d", "--resume"}}}}
	resumed := Done{Attempts: []Attempt{{Args: []string{"train", "--out", "d", "--resume"}}}}
	if fresh.StartUnrecorded() || !resumed.StartUnrecorded() || (Done{}).StartUnrecorded() {
		t.Error("StartUnrecorded")
	}
}

// A run whose first process went unrecorded makes the totals lower
// bounds, and says which run it is.
func TestTallyOfUnrecordedStart(t *testing.T) {
	p := &Plan{Runs: []Run{{ID: "a/seed0"}, {ID: "a/seed1"}}}
	res := &Results{Runs: map[string]*Result{
		"a/seed0": {Done: Done{WallS: 30, CPUS: 50, Attempts: []Attempt{{Args: []string{"train", "--config", "c.yaml"}}}}},
		"a/seed1": {Done: Done{WallS: 30, CPUS: 50, Attempts: []Attempt{{Args: []string{"train", "--out", "d", "--resume"}}}}},
	}}
	line := NewTally(p, res).ComputeLine()
	if !strings.Contains(line, "took ≥ 60 s of wall-clock time and ≥ 100 s of CPU time") || !strings.Contains(line, "1 run (a/seed1)") {
		t.Errorf("compute line %q", line)
	}
	delete(res.Runs, "a/seed1")
	if line := NewTally(p, res).ComputeLine(); strings.Contains(line, "≥") {
		t.Errorf("compute line without unrecorded runs %q", line)
	}
}

// A run whose folder links to another study's run folder is named as
// shared, and its compute is left out of the totals.
func TestTallyOfSharedRuns(t *testing.T) {
	work, other := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(work, "a", "seed1")); err != nil {
		t.Fatal(err)
	}
	p := &Plan{Runs: []Run{{ID: "a/seed0", Dir: filepath.Join(work, "a", "seed0")}, {ID: "a/seed1", Dir: filepath.Join(work, "a", "seed1")}}}
	res := &Results{Runs: map[string]*Result{
		"a/seed0": {Done: Done{WallS: 30, CPUS: 50, Attempts: []Attempt{{Args: []string{"train"}}}}},
		"a/seed1": {Done: Done{WallS: 300, CPUS: 500, Attempts: []Attempt{{Args: []string{"train", "--resume"}}}}},
	}}
	tally := NewTally(p, res)
	target, _ := filepath.EvalSymlinks(other)
	if len(tally.Shared) != 1 || tally.Shared[0] != (SharedRun{ID: "a/seed1", Target: target}) || tally.WallS != 30 || tally.CPUS != 50 {
		t.Fatalf("tally %+v", tally)
	}
	line := tally.ComputeLine()
	if !strings.Contains(line, "took 30 s of wall-clock time and 50 s of CPU time") || !strings.Contains(line, "Shared with another study") ||
		!strings.Contains(line, "a/seed1 → ") || !strings.Contains(line, "their compute is not in these totals") {
		t.Errorf("compute line %q", line)
	}
}

// studyHelperEnv makes the test binary act as a study that runs one
// vit-train attempt (TestMain).
const studyHelperEnv = "STUDY_TEST_HELPER_RUN_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(studyHelperEnv); dir != "" {
		rn := &Runner{Build: Build{Bin: os.Getenv("STUDY_TEST_HELPER_BIN")}, Out: io.Discard}
		_, err := rn.exec(context.Background(), Run{ID: "x", Dir: dir}, []string{"train", "--out", dir})
		fmt.Println(err)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// vit-train gets SIGTERM (and saves a checkpoint) when the study is
// killed, rather than running on unwatched.
func TestVitTrainStopsWithTheStudy(t *testing.T) {
	dir := t.TempDir()
	bin, mark := filepath.Join(dir, "vit-train"), filepath.Join(dir, "got-term")
	started := filepath.Join(dir, "started")
	script := "#!/bin/sh\ntrap 'echo > " + mark + "; exit 0' TERM\necho $$ > " + started + "\nwhile :; do sleep 0.05; done\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	study := exec.Command(self, "-test.run=^$")
	study.Env = append(os.Environ(), studyHelperEnv+"="+filepath.Join(dir, "run"), "STUDY_TEST_HELPER_BIN="+bin)
	if err := study.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, started)
	t.Cleanup(func() { // should the test fail
		if b, err := os.ReadFile(started); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	if err := study.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = study.Wait()
	waitFor(t, mark)
}

func waitFor(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return
		}
	}
	t.Fatalf("%s did not appear", path)
}
