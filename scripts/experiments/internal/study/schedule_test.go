package study

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// schedulePlan is a teacher T; per seed, a run A, its fine-tune B and a run
// C distilled from T while fine-tuning A; and a run whose folder name
// extends A's (seed1 and seed10), which needs nothing.
func schedulePlan(work string) *Plan {
	p := NewPlan()
	m := RunMaker{work: work, trainN: 1, evN: 1}
	t := m.New("teacher", 0, 1, 28, "train")
	p.Add(t)
	for _, seed := range []string{"seed1", "seed10"} {
		a := m.New("a/"+seed, 0, 1, 28, "train")
		p.Add(a)
		p.Add(m.New("b/"+seed, 0, 1, 28, "finetune", "--from", a.Last()))
		p.Add(m.New("c/"+seed, 0, 1, 28, "finetune", "--from", a.Last(), "--set", "distill.teacher="+t.Last()))
	}
	return p
}

func TestNeedsReadsTheArguments(t *testing.T) {
	p := schedulePlan(t.TempDir())
	want := map[string][]string{
		"teacher": nil, "a/seed1": nil, "a/seed10": nil,
		"b/seed1": {"a/seed1"}, "b/seed10": {"a/seed10"},
		"c/seed1": {"teacher", "a/seed1"}, "c/seed10": {"teacher", "a/seed10"},
	}
	for _, r := range p.Runs {
		if got := p.Needs(r); !slices.Equal(got, want[r.ID]) {
			t.Errorf("%s needs %v, want %v", r.ID, got, want[r.ID])
		}
	}
}

// scheduleTrace runs Schedule with do sleeping 20 ms (or slow[ID]) and
// failing for the run failID, and returns the order runs started and ended
// in, the most runs active at once and Schedule's error.
func scheduleTrace(t *testing.T, p *Plan, jobs int, failID string, slow map[string]time.Duration) (events []string, most int, err error) {
	t.Helper()
	var mu sync.Mutex
	active := 0
	err = Schedule(p, jobs, func(i int) error {
		id := p.Runs[i].ID
		mu.Lock()
		events = append(events, "start "+id)
		active++
		most = max(most, active)
		mu.Unlock()
		d, ok := slow[id]
		if !ok {
			d = 20 * time.Millisecond
		}
		time.Sleep(d)
		mu.Lock()
		events = append(events, "end "+id)
		active--
		mu.Unlock()
		if id == failID {
			return errors.New("failed " + id)
		}
		return nil
	})
	return events, most, err
}

func TestScheduleOneJobIsThePlanInOrder(t *testing.T) {
	p := schedulePlan(t.TempDir())
	events, most, err := scheduleTrace(t, p, 1, "", nil)
	if err != nil || most != 1 {
		t.Fatalf("error %v, %d at once", err, most)
	}
	var want []string
	for _, r := range p.Runs {
		want = append(want, "start "+r.ID, "end "+r.ID)
	}
	if !slices.Equal(events, want) {
		t.Errorf("events %v, want %v", events, want)
	}
	// An error stops the study at once.
	events, _, err = scheduleTrace(t, p, 1, "a/seed1", nil)
	if err == nil || err.Error() != "failed a/seed1" || len(events) != 4 {
		t.Errorf("after a failure: error %v, events %v", err, events)
	}
}

func TestScheduleJobsRespectNeeds(t *testing.T) {
	p := schedulePlan(t.TempDir())
	events, most, err := scheduleTrace(t, p, 3, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if most < 2 || most > 3 {
		t.Errorf("%d runs at once with 3 jobs", most)
	}
	at := map[string]int{}
	for i, e := range events {
		at[e] = i
	}
	if len(at) != 2*len(p.Runs) {
		t.Fatalf("events %v", events)
	}
	for _, r := range p.Runs {
		for _, id := range p.Needs(r) {
			if at["start "+r.ID] < at["end "+id] {
				t.Errorf("%s started before %s, which it needs, ended: %v", r.ID, id, events)
			}
		}
	}
}

// After an error no run starts, although a job is free and runs are ready;
// the runs already going finish.
func TestScheduleStopsStartingAfterAnError(t *testing.T) {
	p := NewPlan()
	m := RunMaker{work: t.TempDir(), trainN: 1, evN: 1}
	for _, id := range []string{"fails", "slow", "ready", "also-ready"} {
		p.Add(m.New(id, 0, 1, 28, "train"))
	}
	events, _, err := scheduleTrace(t, p, 2, "fails", map[string]time.Duration{"fails": time.Millisecond, "slow": 300 * time.Millisecond})
	if err == nil || err.Error() != "failed fails" {
		t.Fatalf("error %v", err)
	}
	if !slices.Equal(events, []string{"start fails", "start slow", "end fails", "end slow"}) && !slices.Equal(events, []string{"start slow", "start fails", "end fails", "end slow"}) {
		t.Errorf("events %v: after the failure nothing starts and the slow run ends", events)
	}
}

// With several jobs each vit-train gets its share of the CPUs as
// GOMAXPROCS, and its attempt records how it ran; the compute line says so.
func TestRunnerThreadsAndTheComputeLine(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "vit-train")
	script := "#!/bin/sh\necho \"GOMAXPROCS=$GOMAXPROCS\" >> " + filepath.Join(dir, "env.txt") + "\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOMAXPROCS", "")
	r := Run{ID: "x", Dir: filepath.Join(dir, "x")}
	for _, rn := range []*Runner{{Jobs: 1}, {Jobs: 2, Threads: 3}} {
		rn.Build, rn.Out = Build{Bin: bin}, io.Discard
		a, err := rn.exec(t.Context(), r, []string{"train"})
		if err != nil {
			t.Fatal(err)
		}
		// Without --jobs or GOMAXPROCS, vit-train takes the CPUs the
		// study may run on.
		want := rn.Threads
		if want == 0 {
			want = runtime.NumCPU()
		}
		if a.Jobs != rn.Jobs || a.Threads != want {
			t.Errorf("attempt %+v of runner %+v, want %d threads", a, rn, want)
		}
	}
	// One job in a study started with GOMAXPROCS=2: vit-train inherits
	// it, and the attempt says so.
	t.Setenv("GOMAXPROCS", "2")
	rn := &Runner{Jobs: 1, Build: Build{Bin: bin}, Out: io.Discard}
	if a, err := rn.exec(t.Context(), r, []string{"train"}); err != nil || a.Threads != 2 || concurrencyLabel(a) != "one run at a time, on 2 threads" {
		t.Errorf("attempt %+v (%s), %v", a, concurrencyLabel(a), err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "env.txt"))
	if err != nil || string(b) != "GOMAXPROCS=\nGOMAXPROCS=3\nGOMAXPROCS=2\n" {
		t.Errorf("vit-train's GOMAXPROCS: %q, %v", b, err)
	}

	tally := Tally{Concurrency: add(add(add(nil, concurrencyLabel(Attempt{})), concurrencyLabel(Attempt{Jobs: 2, Threads: 1})), concurrencyLabel(Attempt{Jobs: 2, Threads: 1}))}
	line := tally.ComputeLine()
	want := "Training ran one run at a time, on every CPU the study could use (1 process) and 2 runs at a time, each on 1 thread (2 processes). A run that shared the CPUs"
	if !strings.Contains(line, want) {
		t.Errorf("compute line %q lacks %q", line, want)
	}
	alone := Tally{Concurrency: add(nil, concurrencyLabel(Attempt{Jobs: 1}))}.ComputeLine()
	if strings.Contains(alone, "shared") || !strings.Contains(alone, "one run at a time, on every CPU the study could use (1 process).") {
		t.Errorf("compute line of runs alone: %q", alone)
	}
}

// --jobs is part of the command that continues a study, and not below 1.
func TestJobsFlag(t *testing.T) {
	c := DefaultCommon("x")
	if _, err := Parse(Command{Name: "x"}, []string{"--jobs", "2", "--work", t.TempDir(), "--out", t.TempDir()}, &c); err != nil {
		t.Fatal(err)
	}
	if got := FlagsLine(c, nil, nil, c.Data); got != " --jobs 2" {
		t.Errorf("flags line %q, want \" --jobs 2\"", got)
	}
	c = DefaultCommon("x")
	if _, err := Parse(Command{Name: "x"}, []string{"--jobs", "0"}, &c); err == nil || !strings.Contains(err.Error(), "--jobs 0") {
		t.Errorf("--jobs 0: %v", err)
	}
}

// A binary given with --bin names the commit go build stamped into it.
func TestBinaryCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	run := func(name string, args ...string) string {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GOFLAGS=-buildvcs=true")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for name, text := range map[string]string{"go.mod": "module x\n\ngo 1.22\n", "main.go": "package main\n\nfunc main() {}\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("git", "init", "-q")
	run("git", "add", ".")
	run("git", "commit", "-qm", "x")
	commit := run("git", "rev-parse", "HEAD")
	run("go", "build", "-o", "x")
	if got := binaryCommit(filepath.Join(dir, "x")); got != commit[:12] {
		t.Errorf("binaryCommit = %q, want %q", got, commit[:12])
	}
	if got := binaryCommit(filepath.Join(dir, "main.go")); got != "not recorded in the binary" {
		t.Errorf("binaryCommit of a source file = %q", got)
	}
}
