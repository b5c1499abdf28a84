package study

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// CheckTolPct is how far, in percent, the top-1 of one run may differ
// between its logits, its evaluation and its last epoch's log.
const CheckTolPct = 1e-6

// Tally is the compute, builds and commands of a study's finished runs.
type Tally struct {
	// WallS and CPUS are the finished runs' vit-train processes, training,
	// evaluation and logits together.
	WallS, CPUS   float64
	Build, Commit string   // the first finished run's
	Binaries      []string // the distinct binaries' SHA-256, in run order
	Commands      []string // seed 0's vit-train commands
	Missing       []string // the runs not finished
	// Unrecorded are the finished runs whose first training process went
	// unrecorded (Done.StartUnrecorded): their times are lower bounds.
	Unrecorded []string
	// Concurrency counts the finished runs' training processes by how they
	// ran (concurrencyLabel), in order of first appearance.
	Concurrency []LabelCount
	// Shared are the finished runs whose folder is a link to another
	// study's run folder: they are not counted in WallS, CPUS and
	// Concurrency, which that study's report counts.
	Shared []SharedRun
}

// SharedRun is a run whose folder links to the folder Target.
type SharedRun struct{ ID, Target string }

// sharedTarget is the folder dir links to, or "" when dir is not a link.
func sharedTarget(dir string) string {
	fi, err := os.Lstat(dir)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return ""
	}
	target, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	return target
}

// LabelCount is a label and how many things carry it.
type LabelCount struct {
	Label string
	N     int
}

// concurrencyLabel says how the study ran a training process.
func concurrencyLabel(a Attempt) string {
	switch {
	case a.Jobs <= 1 && a.Threads == 0:
		return "one run at a time, on every CPU the study could use"
	case a.Jobs <= 1:
		return "one run at a time, on " + Plural(a.Threads, "thread")
	}
	return fmt.Sprintf("%d runs at a time, each on %s", a.Jobs, Plural(a.Threads, "thread"))
}

// add counts one more of label.
func add(counts []LabelCount, label string) []LabelCount {
	for i := range counts {
		if counts[i].Label == label {
			counts[i].N++
			return counts
		}
	}
	return append(counts, LabelCount{label, 1})
}

// NewTally adds up p's finished runs.
func NewTally(p *Plan, res *Results) Tally {
	var t Tally
	for _, r := range p.Runs {
		rr, ok := res.Runs[r.ID]
		if !ok {
			t.Missing = append(t.Missing, r.ID)
			continue
		}
		if t.Build == "" {
			t.Build, t.Commit = rr.Done.Build, rr.Done.Commit
		}
		if !slices.Contains(t.Binaries, rr.Done.Binary) {
			t.Binaries = append(t.Binaries, rr.Done.Binary)
		}
		if r.Seed == 0 {
			t.Commands = append(t.Commands, CommandLine(r))
		}
		if target := sharedTarget(r.Dir); target != "" {
			t.Shared = append(t.Shared, SharedRun{ID: r.ID, Target: target})
			continue
		}
		t.WallS += rr.Done.WallS
		t.CPUS += rr.Done.CPUS
		if rr.Done.StartUnrecorded() {
			t.Unrecorded = append(t.Unrecorded, r.ID)
		}
		for _, a := range rr.Done.Attempts {
			t.Concurrency = add(t.Concurrency, concurrencyLabel(a))
		}
		for _, a := range rr.Post {
			t.WallS += a.WallS
			t.CPUS += a.CPUS
		}
	}
	return t
}

// CommandLine is the vit-train command that starts r, for a report: its
// paths relative to the current folder.
func CommandLine(r Run) string { return "vit-train " + QuoteArgs(RelArgs(r.Args)) }

// BuildLine is the report's setup line on the build and the machine.
func (t Tally) BuildLine() string {
	bins := "no run finished yet"
	switch n := len(t.Binaries); {
	case n == 1:
		bins = fmt.Sprintf("every run ran the same binary (SHA-256 %.12s…)", t.Binaries[0])
	case n > 1:
		bins = fmt.Sprintf("the runs ran %d different binaries (the study was continued with --rebuild or --bin); the first: build %s, commit %s", n, t.Build, t.Commit)
	}
	return fmt.Sprintf("- **Build and machine**: vit-train, build: %s, commit %s; %s; %d CPUs (%s); report written %s.\n",
		t.Build, t.Commit, bins, runtime.NumCPU(), CPUModel(), time.Now().UTC().Format("2006-01-02"))
}

// ComputeLine is the report's setup line on the compute of the finished
// runs.
func (t Tally) ComputeLine() string {
	ran := ""
	if len(t.Concurrency) > 0 {
		parts := make([]string, len(t.Concurrency))
		for i, c := range t.Concurrency {
			processes := "processes"
			if c.N == 1 {
				processes = "process"
			}
			parts[i] = fmt.Sprintf("%s (%d %s)", c.Label, c.N, processes)
		}
		ran = " Training ran " + joinAnd(parts) + "."
		if len(t.Concurrency) > 1 || t.Concurrency[0].Label != concurrencyLabel(Attempt{}) {
			ran += " A run that shared the CPUs took longer on the clock than it would alone: compare runs by CPU time and FLOPs."
		}
	}
	lower := slices.ContainsFunc(t.Unrecorded, func(id string) bool { return !t.shared(id) })
	return fmt.Sprintf("- **Compute**: the finished runs' vit-train processes (training, evaluation, logits) took %s of wall-clock time and %s of CPU time.%s%s%s\n\n",
		AtLeast(Minutes(t.WallS), lower), AtLeast(Minutes(t.CPUS), lower), ran, t.sharedNote(), t.unrecordedNote())
}

// shared says whether the run id is one of t.Shared.
func (t Tally) shared(id string) bool {
	return slices.ContainsFunc(t.Shared, func(s SharedRun) bool { return s.ID == id })
}

// sharedNote names the runs shared with another study, as a sentence to
// append ("" when there are none).
func (t Tally) sharedNote() string {
	if len(t.Shared) == 0 {
		return ""
	}
	parts := make([]string, len(t.Shared))
	for i, s := range t.Shared {
		parts[i] = fmt.Sprintf("%s → %s", s.ID, RelPath(s.Target))
	}
	return fmt.Sprintf(" Shared with another study (the run folder a link to that study's): %s; their numbers are in this report, their compute is not in these totals (that study's report counts it).", joinAnd(parts))
}

// UnrecordedFootnote is the paragraph under a table of run times that
// explains its lower bounds ("" when there are none).
func (t Tally) UnrecordedFootnote() string {
	if len(t.Unrecorded) == 0 {
		return ""
	}
	return "\n" + strings.TrimSpace(t.unrecordedNote()) + "\n"
}

// unrecordedNote explains the report's lower bounds, as a sentence to
// append ("" when there are none).
func (t Tally) unrecordedNote() string {
	if len(t.Unrecorded) == 0 {
		return ""
	}
	its := "their"
	if len(t.Unrecorded) == 1 {
		its = "its"
	}
	return fmt.Sprintf(" ≥: at least. The first training process of %s (%s) ended with the study before it could be recorded, so %s times count the later processes only.",
		Plural(len(t.Unrecorded), "run"), strings.Join(t.Unrecorded, ", "), its)
}

// ConsistencyCheck compares, for each finished run, the top-1 of its test
// logits (vit-train logits, over its evaluation split: the test set, or
// the images it held out) with its first evaluation (vit-train eval) and
// the last epoch's validation top-1 (the training run's own evaluation),
// and its epochs.csv with its epochs.
func ConsistencyCheck(p *Plan, res *Results) Check {
	var bad []string
	n := 0
	for _, r := range p.Runs {
		rr, ok := res.Runs[r.ID]
		if !ok {
			continue
		}
		n++
		fromLogits := Accuracy(rr.Test.Argmax(), rr.Labels)
		lastVal := math.NaN()
		if len(rr.Epochs) > 0 {
			lastVal = rr.Epochs[len(rr.Epochs)-1]["val_top1"]
		}
		switch {
		case rr.Test.N != rr.Eval.N:
			bad = append(bad, fmt.Sprintf("%s: %d test logits, %d evaluated images", r.ID, rr.Test.N, rr.Eval.N))
		case !(math.Abs(fromLogits-rr.Eval.Top1) <= CheckTolPct):
			bad = append(bad, fmt.Sprintf("%s: top-1 %.4f%% from the test logits, %.4f%% from vit-train eval", r.ID, fromLogits, rr.Eval.Top1))
		case !(math.Abs(lastVal-rr.Eval.Top1) <= CheckTolPct):
			bad = append(bad, fmt.Sprintf("%s: top-1 %.4f%% in the last epoch's log, %.4f%% from vit-train eval of last.safetensors", r.ID, lastVal, rr.Eval.Top1))
		case len(rr.Epochs) != r.Epochs:
			bad = append(bad, fmt.Sprintf("%s: epochs.csv has %d epochs, the run %d", r.ID, len(rr.Epochs), r.Epochs))
		}
	}
	c := Check{Name: "each run's top-1 on its evaluation split (the test set, or the training images it held out) is the same from its logits (vit-train logits), its evaluation (vit-train eval) and its last epoch's log; epochs.csv has every epoch", OK: len(bad) == 0}
	if c.OK {
		c.Detail = fmt.Sprintf("%d runs agree", n)
	} else {
		c.Detail = strings.Join(bad, "; ")
	}
	return c
}

// joinAnd joins items as a list in prose: "a", "a and b", "a, b and c".
func joinAnd(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
