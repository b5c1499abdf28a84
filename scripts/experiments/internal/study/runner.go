package study

import (
	"bufio"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vit-train/vit-train/formats/atomicfile"
)

// ErrInterrupted is returned when a signal stopped the study.
var ErrInterrupted = errors.New("interrupted")

// Execute prepares the work folder for p (its recipes from configs'
// configs/*.yaml written into cfgDir; run folders started with other
// settings refused) and, unless c.ReportOnly, builds vit-train and runs
// p's runs, c.Jobs at a time, in plan order as each becomes ready (see
// Schedule). With more than one job each vit-train gets an equal share of
// the CPUs as its GOMAXPROCS. A stopped study's error names continueCmd.
func Execute(ctx context.Context, c Common, p *Plan, configs embed.FS, cfgDir, continueCmd string) error {
	if err := CheckData(c.Data); err != nil {
		return err
	}
	if err := os.MkdirAll(c.Work, 0o755); err != nil {
		return err
	}
	if err := CheckExisting(c, p); err != nil {
		return err
	}
	if err := FixSeeds(c.Work, p, !c.ReportOnly); err != nil {
		return err
	}
	if err := WriteConfigs(cfgDir, configs, p.Started()); err != nil {
		return err
	}
	if c.ReportOnly {
		return nil
	}
	fmt.Printf("study: %d runs in %s; report in %s\n", len(p.Runs), c.Work, c.Out)
	jobs := max(1, c.Jobs)
	r := &Runner{Out: os.Stdout, Jobs: jobs}
	if jobs > 1 {
		r.Threads = max(1, runtime.NumCPU()/jobs)
		fmt.Printf("study: %d runs at a time, each vit-train on %s\n", jobs, Plural(r.Threads, "thread"))
	}
	var err error
	if r.Build, err = BuildBinary(ctx, c); err != nil {
		return err
	}
	err = Schedule(p, jobs, func(i int) error {
		if err := r.Do(ctx, p.Runs[i], i+1, len(p.Runs)); err != nil {
			if errors.Is(err, ErrInterrupted) {
				return err
			}
			return fmt.Errorf("%s: %w", p.Runs[i].ID, err)
		}
		return nil
	})
	if errors.Is(err, ErrInterrupted) {
		return fmt.Errorf("%w; to continue: %s", err, continueCmd)
	}
	return err
}

// Schedule calls do for each run of p, by its index, at most jobs at once:
// a run starts, in plan order, once every run it needs (Plan.Needs) has
// returned without error. After an error no run starts; those running
// finish, and Schedule returns the first error. With one job it is p's
// runs in order, stopping at the first error.
func Schedule(p *Plan, jobs int, do func(i int) error) error {
	needs := p.needIndices()
	const (
		waiting = iota
		running
		finished
	)
	state := make([]int, len(p.Runs))
	ready := func(i int) bool {
		for _, j := range needs[i] {
			if state[j] != finished {
				return false
			}
		}
		return state[i] == waiting
	}
	type result struct {
		i   int
		err error
	}
	results := make(chan result)
	var first error
	active := 0
	for {
		for i := 0; first == nil && active < jobs && i < len(p.Runs); i++ {
			if ready(i) {
				state[i] = running
				active++
				go func() { results <- result{i, do(i)} }()
			}
		}
		if active == 0 {
			return first
		}
		res := <-results
		active--
		if res.err != nil {
			if first == nil {
				first = res.err
			}
			continue
		}
		state[res.i] = finished
	}
}

// Runner runs a study's commands.
type Runner struct {
	Build Build
	Out   io.Writer
	// Jobs is how many runs train at once; Threads, when not 0, is the
	// GOMAXPROCS each vit-train gets (otherwise it takes every CPU).
	Jobs, Threads int
}

// Attempt is one vit-train process of a run.
type Attempt struct {
	Start  time.Time `json:"start"`
	Args   []string  `json:"args"`
	WallS  float64   `json:"wall_s"`
	CPUS   float64   `json:"cpu_s"` // user + system
	Status int       `json:"exit_status"`
	// Jobs is how many runs the study trained at once, Threads the
	// process's GOMAXPROCS, from --jobs, the study's own environment or
	// the CPUs the study may run on (0 in records written before it was
	// recorded: every CPU the study could use). Records written before
	// these fields existed have neither: their study ran one run at a
	// time.
	Jobs    int `json:"jobs,omitempty"`
	Threads int `json:"threads,omitempty"`
	// Interrupted marks a process that ended with the study (killed,
	// the machine stopped) before its end could be recorded: its times
	// are those of its last progress record, at most progressEvery old.
	Interrupted bool `json:"interrupted,omitempty"`
}

// progressEvery is how often a running process's times are recorded, so
// that a study killed with it loses at most this much of its CPU time.
const progressEvery = 15 * time.Second

// Done marks a finished training run. Its WallS and CPUS add up the
// training attempts on record.
type Done struct {
	ID       string    `json:"id"`
	Args     []string  `json:"args"` // the command that started it
	Attempts []Attempt `json:"attempts"`
	WallS    float64   `json:"wall_s"`
	CPUS     float64   `json:"cpu_s"`
	Build    string    `json:"build"`
	Commit   string    `json:"commit"`
	Binary   string    `json:"binary_sha256"`
}

// StartUnrecorded says whether the run's first training process is
// missing from its record (its first recorded attempt resumes: a study
// that predates progress records was killed with it), so that WallS and
// CPUS are lower bounds.
func (d Done) StartUnrecorded() bool {
	return len(d.Attempts) > 0 && slices.Contains(d.Attempts[0].Args, "--resume")
}

// Do trains r (skipped when finished, resumed when stopped) and writes the
// outputs a report reads: r's evaluations of last.safetensors, the test
// logits and, when r asks for them, the training logits.
func (rn *Runner) Do(ctx context.Context, r Run, i, n int) error {
	tag := fmt.Sprintf("[%d/%d] %s", i, n, r.ID)
	if _, err := os.Stat(r.DoneFile()); err == nil {
		fmt.Fprintf(rn.Out, "%s: finished, skipped\n", tag)
	} else if err := rn.train(ctx, r, tag); err != nil {
		return err
	}
	for _, e := range r.Evals {
		if _, err := os.Stat(r.evalJSON(e.Name)); err == nil {
			continue
		}
		tmp := r.EvalDir(e.Name) + ".tmp"
		if err := os.RemoveAll(tmp); err != nil {
			return err
		}
		args := append([]string{"eval", "--checkpoint", r.Last(), "--out", tmp}, e.Args...)
		if _, err := rn.exec(ctx, r, args); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		if err := os.Rename(tmp, r.EvalDir(e.Name)); err != nil {
			return err
		}
	}
	logits := []struct {
		split, path string
	}{{"test", r.TestLogits()}}
	if r.TrainLogits {
		logits = append(logits, struct{ split, path string }{"train", r.TrainLogitsFile()})
	}
	for _, l := range logits {
		if _, err := os.Stat(l.path); err == nil {
			continue
		}
		tmp := strings.TrimSuffix(l.path, ".npy") + ".tmp.npy"
		if _, err := rn.exec(ctx, r, []string{"logits", "--checkpoint", r.Last(), "--split", l.split, "--out", tmp}); err != nil {
			return fmt.Errorf("logits --split %s: %w", l.split, err)
		}
		if err := os.Rename(tmp, l.path); err != nil {
			return err
		}
	}
	return nil
}

// train runs vit-train until r's run is finished: from the start, or from
// its last checkpoint with --resume.
func (rn *Runner) train(ctx context.Context, r Run, tag string) error {
	args := r.Args
	_, err := os.Stat(r.Last())
	switch {
	case err == nil:
		args = []string{"train", "--out", r.Dir, "--resume"}
		fmt.Fprintf(rn.Out, "%s: resuming (%s)\n", tag, Plural(r.Epochs, "epoch"))
	case errors.Is(err, os.ErrNotExist):
		// A folder without a checkpoint holds nothing to continue from:
		// start afresh.
		if err := removeUncheckpointed(r.Dir); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(r.Dir), 0o755); err != nil {
			return err
		}
		fmt.Fprintf(rn.Out, "%s: training (%s)\n", tag, Plural(r.Epochs, "epoch"))
	default:
		return err
	}
	if _, err := rn.exec(ctx, r, args); err != nil {
		return err
	}
	rec := Done{ID: r.ID, Args: append([]string{"vit-train"}, r.Args...), Build: rn.Build.Tags, Commit: rn.Build.Commit, Binary: rn.Build.SHA256}
	atts, err := readAttempts(r.attemptsFile())
	if err != nil {
		return err
	}
	for _, a := range atts {
		if a.Args[0] == "train" || a.Args[0] == "finetune" {
			rec.Attempts = append(rec.Attempts, a)
			rec.WallS += a.WallS
			rec.CPUS += a.CPUS
		}
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(r.DoneFile(), append(b, '\n')); err != nil {
		return err
	}
	fmt.Fprintf(rn.Out, "%s: done in %s (CPU %s)\n", tag, dur(rec.WallS), dur(rec.CPUS))
	return nil
}

// removeUncheckpointed removes a run folder that holds no checkpoint (a
// run stopped before its first one).
func removeUncheckpointed(dir string) error {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	ck, err := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	if err != nil {
		return err
	}
	if len(ck) > 0 {
		return fmt.Errorf("%s holds %s but no last.safetensors: remove the folder to train the run again", dir, filepath.Base(ck[0]))
	}
	return os.RemoveAll(dir)
}

// exec runs vit-train with args, its output appended to r's log, in its
// own process group: a signal to the study is passed to it once (vit-train
// then saves a checkpoint and exits) and the study stops. Each attempt is
// recorded in the run's attempts log when it ends and, while it runs, in
// the run's progress record, which the next attempt moves into the log if
// the study died with it.
func (rn *Runner) exec(ctx context.Context, r Run, args []string) (Attempt, error) {
	log, err := os.OpenFile(r.LogFile(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return Attempt{}, err
	}
	defer log.Close()
	fmt.Fprintf(log, "\n$ %s %s\n", rn.Build.Bin, QuoteArgs(args))
	cmd := exec.Command(rn.Build.Bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group keeps a terminal's Ctrl-C from reaching it
	// twice; SIGTERM when the study dies (killed, its terminal closed)
	// makes it save a checkpoint and exit rather than run on unwatched.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	threads := rn.Threads
	if threads > 0 {
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(threads))
	} else if n, err := strconv.Atoi(os.Getenv("GOMAXPROCS")); err == nil && n > 0 {
		threads = n // the study's own setting, which vit-train inherits
	} else {
		threads = runtime.NumCPU() // vit-train's default: the CPUs the study may run on (taskset narrows them)
	}
	a := Attempt{Start: time.Now(), Args: args, Jobs: rn.Jobs, Threads: threads}
	// Every SIGINT or SIGTERM the study receives goes to vit-train: the
	// first stops it with a checkpoint, a second ends it at once. One that
	// came before has cancelled ctx.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if ctx.Err() != nil {
		return a, fmt.Errorf("%w before %s", ErrInterrupted, r.ID)
	}
	if err := recoverInterrupted(r); err != nil {
		return a, err
	}
	if err := cmd.Start(); err != nil {
		return a, err
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-tick.C:
				recordProgress(r, a, cmd.Process.Pid)
			case <-done:
				return
			}
		}
	}()
	werr := cmd.Wait()
	close(done)
	<-exited
	a.WallS = time.Since(a.Start).Seconds()
	if ps := cmd.ProcessState; ps != nil {
		a.CPUS = (ps.UserTime() + ps.SystemTime()).Seconds()
		a.Status = ps.ExitCode()
	}
	if err := appendAttempt(r.attemptsFile(), a); err != nil {
		return a, err
	}
	if err := os.Remove(r.progressFile()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return a, err
	}
	if ctx.Err() != nil {
		return a, fmt.Errorf("%w during %s (vit-train exit status %d; log %s)", ErrInterrupted, r.ID, a.Status, r.LogFile())
	}
	if werr != nil {
		return a, fmt.Errorf("vit-train %s: %w\n%s", args[0], werr, tail(r.LogFile(), 15))
	}
	return a, nil
}

// recordProgress writes a, with its times so far, as r's progress record:
// the attempt's entry in the attempts log should the study end with it.
// A failed write only widens that gap, so it is not an error.
func recordProgress(r Run, a Attempt, pid int) {
	cpu, err := processCPUSeconds(pid)
	if err != nil {
		return
	}
	a.WallS, a.CPUS, a.Interrupted = time.Since(a.Start).Seconds(), cpu, true
	if b, err := json.Marshal(a); err == nil {
		_ = WriteFileAtomic(r.progressFile(), b)
	}
}

// recoverInterrupted moves the progress record that a killed study left
// for r into r's attempts log, unless the log already ends with it (the
// study was killed between recording an attempt and removing its
// progress record).
func recoverInterrupted(r Run) error {
	b, err := os.ReadFile(r.progressFile())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var a Attempt
	if err := json.Unmarshal(b, &a); err != nil || len(a.Args) == 0 {
		return os.Remove(r.progressFile()) // cut short as it was written
	}
	atts, err := readAttempts(r.attemptsFile())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if len(atts) == 0 || !atts[len(atts)-1].Start.Equal(a.Start) {
		if err := appendAttempt(r.attemptsFile(), a); err != nil {
			return err
		}
	}
	return os.Remove(r.progressFile())
}

// processCPUSeconds is the user and system CPU time of process pid, all
// its threads, from /proc/PID/stat (in clock ticks of 1/100 s, Linux's
// fixed USER_HZ).
func processCPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from after its closing parenthesis, where field 3 (state) starts.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return float64(utime+stime) / 100, nil
}

func appendAttempt(path string, a Attempt) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readAttempts reads an attempts log, skipping a partial last line.
func readAttempts(path string) ([]Attempt, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Attempt
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var a Attempt
		if json.Unmarshal(sc.Bytes(), &a) == nil && len(a.Args) > 0 {
			out = append(out, a)
		}
	}
	return out, sc.Err()
}

// tail returns the last n lines of a file, indented.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

// QuoteArgs writes args for a shell.
func QuoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			q[i] = a
		}
	}
	return strings.Join(q, " ")
}

// dur formats seconds as a duration.
func dur(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
}

// WriteFileAtomic writes b to path through a synced temporary file.
func WriteFileAtomic(path string, b []byte) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
