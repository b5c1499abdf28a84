package study

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"github.com/vit-train/vit-train/data"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/formats/npy"
)

// fakeVitTrain is a stand-in for the vit-train binary: it logs its
// arguments and writes the files each command writes.
const fakeVitTrain = `#!/bin/sh
echo "$*" >> "$FAKE_LOG"
cmd=$1; shift
out=""
while [ $# -gt 0 ]; do
  case $1 in --out) out=$2; shift;; esac
  shift
done
case $cmd in
  train|finetune)
    mkdir -p "$out" && : > "$out/last.safetensors"
    printf 'epoch,val_top1,epoch_seconds,images_per_s\n1,50,2,100\n' > "$out/epochs.csv" ;;
  eval)
    mkdir -p "$out" && echo '{"n":2,"top1":50,"class_head":{"n":2,"top1":50},"dist_head":{"n":2,"top1":0}}' > "$out/eval.json" ;;
  logits)
    cp "$FAKE_NPY" "$out" ;;
esac
`

func TestRunnerSkipsFinishedAndResumesStopped(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "vit-train")
	if err := os.WriteFile(bin, []byte(fakeVitTrain), 0o755); err != nil {
		t.Fatal(err)
	}
	logPath, logitsPath := filepath.Join(dir, "calls.txt"), filepath.Join(dir, "l.npy")
	// Two test images of labels 9 and 0 (the first Fashion-MNIST test
	// labels), predicted 9 and 1.
	row := func(c int) []float32 { r := make([]float32, 10); r[c] = 1; return r }
	if err := npy.WriteFile(logitsPath, append(row(9), row(1)...), []int{2, 10}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_LOG", logPath)
	t.Setenv("FAKE_NPY", logitsPath)
	r := Run{ID: "students/x/seed0", Dir: filepath.Join(dir, "students", "x", "seed0"), Epochs: 1, Arm: "x"}
	r.Args = []string{"train", "--config", "c.yaml", "--out", r.Dir}
	r.Evals = []Eval{NativeEval}
	rn := &Runner{Build: Build{Bin: bin, Tags: "test", SHA256: "abc"}, Out: io.Discard}
	calls := func() []string {
		b, _ := os.ReadFile(logPath)
		_ = os.Remove(logPath)
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	ctx := context.Background()

	if err := rn.Do(ctx, r, 1, 1); err != nil {
		t.Fatal(err)
	}
	got := calls()
	if len(got) != 3 || got[0] != "train --config c.yaml --out "+r.Dir || !strings.HasPrefix(got[1], "eval --checkpoint "+r.Last()) ||
		!strings.HasPrefix(got[2], "logits --checkpoint "+r.Last()+" --split test") {
		t.Fatalf("first run: calls %q", got)
	}
	var done Done
	if err := ReadJSON(r.DoneFile(), &done); err != nil || len(done.Attempts) != 1 || done.Binary != "abc" {
		t.Fatalf("done record %+v, %v", done, err)
	}

	// Finished: nothing runs.
	if err := rn.Do(ctx, r, 1, 1); err != nil {
		t.Fatal(err)
	}
	if got := calls(); len(got) != 1 || got[0] != "" {
		t.Errorf("finished run: calls %q", got)
	}

	// Stopped after a checkpoint: resumed with the run's own config.
	if err := os.Remove(r.DoneFile()); err != nil {
		t.Fatal(err)
	}
	if err := rn.Do(ctx, r, 1, 1); err != nil {
		t.Fatal(err)
	}
	if got := calls(); len(got) != 1 || got[0] != "train --out "+r.Dir+" --resume" {
		t.Errorf("stopped run: calls %q", got)
	}

	// Stopped before its first checkpoint: started again.
	for _, f := range []string{r.DoneFile(), r.Last()} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := rn.Do(ctx, r, 1, 1); err != nil {
		t.Fatal(err)
	}
	if got := calls(); len(got) != 3 || got[0] != "train --config c.yaml --out "+r.Dir {
		t.Errorf("run without a checkpoint: calls %q", got)
	}

	// The outputs read back.
	rr, err := ReadRun(r)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Eval.Top1 != 50 || rr.Eval.DistHead.Top1 != 0 || rr.Test.N != 2 || rr.TrainS != 2 {
		t.Errorf("read %+v", rr)
	}
	if a := Accuracy(rr.Test.Argmax(), []int{9, 0, 0}); a != 50 {
		t.Errorf("accuracy %v, want 50", a)
	}

	// A folder with another checkpoint but no last.safetensors is refused.
	for _, f := range []string{r.DoneFile(), r.Last()} {
		_ = os.Remove(f)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "best.safetensors"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rn.Do(ctx, r, 1, 1); err == nil || !strings.Contains(err.Error(), "best.safetensors") {
		t.Errorf("folder with best.safetensors only: %v", err)
	}
}

// Student's t quantiles from a t table (two-sided 95% and one-sided 95%).
func TestCriticalMatchesTheTTable(t *testing.T) {
	for _, c := range []struct{ df, p, want float64 }{
		{2, 0.975, 4.303}, {5, 0.975, 2.571}, {1, 0.975, 12.706}, {10, 0.975, 2.228}, {30, 0.975, 2.042},
		{2, 0.95, 2.920}, {5, 0.95, 2.015},
	} {
		if got := studentsT(c.df).Quantile(c.p); math.Abs(got-c.want) > 5e-4 {
			t.Errorf("t_{%v,%v} = %.4f, want %.3f", c.p, c.df, got, c.want)
		}
	}
	if got := Critical(2); math.Abs(got-4.303) > 5e-4 {
		t.Errorf("Critical(2) = %.4f, want 4.303 (two-sided 95%%)", got)
	}
	if !math.IsNaN(Critical(0)) || !math.IsNaN(Critical(math.NaN())) {
		t.Error("Critical without degrees of freedom is not NaN")
	}
	// Two-sided p at the critical value is 1 − Level; at t 2 on 2 df, 0.184.
	if p := (Diff{D: 4.303, SE: 1, DF: 2}).P(); math.Abs(p-0.05) > 1e-4 {
		t.Errorf("p at t_{0.975,2} = %.5f, want 0.05", p)
	}
	if p := (Diff{D: -2, SE: 1, DF: 2}).P(); math.Abs(p-0.1835) > 1e-4 {
		t.Errorf("p at t = −2 on 2 df = %.5f, want 0.1835", p)
	}
}

func TestCompareAndVerdict(t *testing.T) {
	d := Compare([]int{0, 1, 2}, []float64{91, 92, 93}, []int{0, 1, 2}, []float64{90, 90.5, 92.5})
	// Differences 1, 1.5, 0.5: mean 1, std 0.5, SE 0.5/√3, t 3.46 on 2
	// degrees of freedom: more than 2 SE, but below t_{0.975,2} = 4.30.
	if !d.Paired || math.Abs(d.D-1) > 1e-12 || math.Abs(d.SE-0.5/math.Sqrt(3)) > 1e-12 || d.DF != 2 || d.Resolved() {
		t.Errorf("paired: %+v", d)
	}
	if s := d.String(); !strings.Contains(s, "t = 3.46 on 2 degrees of freedom, two-sided p = 0.074: not resolved (|t| ≤ 4.30)") {
		t.Errorf("paired: %s", s)
	}
	d = Compare([]int{0, 1, 2}, []float64{91, 92, 93}, []int{0, 1, 2}, []float64{90, 90.9, 92.1})
	// Differences 1, 1.1, 0.9: t 17.3.
	if !d.Resolved() || d.Sign() != 1 || !strings.Contains(d.String(), ": resolved (|t| > 4.30)") {
		t.Errorf("resolved: %s", d)
	}
	d = Compare([]int{0, 1}, []float64{91, 93}, []int{0, 1, 2}, []float64{90, 91, 92})
	// Welch: variances 2/2 and 1/3, degrees of freedom (4/3)² / (1/1 + (1/9)/2).
	if d.Paired || math.Abs(d.D-1) > 1e-12 || math.Abs(d.SE-math.Sqrt(2.0/2+1.0/3)) > 1e-12 || math.Abs(d.DF-(16.0/9)/(1+1.0/18)) > 1e-12 || d.Resolved() {
		t.Errorf("unpaired: %+v", d)
	}
	if d := Compare([]int{0}, []float64{91}, []int{0}, []float64{90}); !math.IsNaN(d.SE) || !strings.Contains(d.String(), "one seed") || d.Sign() != 0 {
		t.Errorf("one seed: %+v %s", d, d)
	}
	nan := math.NaN()
	for _, c := range []struct {
		diffs []Diff
		want  string
	}{
		{[]Diff{{D: 1, SE: 0.2, DF: 2}, {D: 0.5, SE: 0.1, DF: 2}}, Holds}, // t 5
		{[]Diff{{D: 1, SE: 0, DF: 2}}, Holds},                             // the same on every seed
		{[]Diff{{D: 1, SE: 0.4, DF: 2}, {D: 0.5, SE: 0.1, DF: 2}}, NotResolved},
		{[]Diff{{D: 1.08, SE: 0.47, DF: 2}}, NotResolved}, // 2.3 SE: more than 2, less than 4.30
		{[]Diff{{D: 1.08, SE: 0.47, DF: 20}}, Holds},      // 2.3 SE on 20 df: above 2.09
		{[]Diff{{D: 1, SE: 0.1, DF: 2}, {D: -0.1, SE: 0.2, DF: 2}}, NotResolved},
		{[]Diff{{D: 1, SE: nan, DF: nan}}, NotResolved}, // one seed
		{[]Diff{{D: 1, SE: 0.1, DF: 0}}, NotResolved},   // no degrees of freedom
		{[]Diff{{D: 1, SE: 0.1, DF: 2}, {D: -0.5, SE: 0.1, DF: 2}}, DoesNotHold},
		{[]Diff{{D: -0.83, SE: 0.27, DF: 2}}, NotResolved}, // 3.1 SE below
		{[]Diff{{D: 0, SE: 0, DF: 2}}, DoesNotHold},        // equal on every seed
		{[]Diff{{D: -1, SE: nan, DF: nan}, {D: 1, SE: 0.1, DF: 2}}, NotResolved},
		{[]Diff{{D: 1, SE: 0.1, DF: 2}, {D: nan, SE: nan, DF: nan}}, NotMeasured},
		{nil, NotMeasured},
	} {
		if got := Verdict(c.diffs...); got != c.want {
			t.Errorf("Verdict(%+v) = %s, want %s", c.diffs, got, c.want)
		}
	}
}

// The rule a report prints says what Verdict computes: two-sided t, its
// critical value for the report's seeds, and no "twice its standard
// error".
func TestVerdictRuleSaysWhatVerdictComputes(t *testing.T) {
	rule := VerdictRule(3)
	for _, want := range []string{"Student's t, two-sided at 95%", "4.30 for 3 paired seeds", "positive and resolved", "negative and resolved", "fixed before the runs"} {
		if !strings.Contains(rule, want) {
			t.Errorf("rule lacks %q: %s", want, rule)
		}
	}
	if strings.Contains(rule, "twice") || strings.Contains(rule, "not positive by at least") {
		t.Errorf("rule still reads as the 2-SE rule: %s", rule)
	}
	if !strings.Contains(VerdictRule(6), "2.57 for 6 paired seeds") || strings.Contains(VerdictRule(1), " for 1 ") {
		t.Errorf("rule for 6 and 1 seeds: %s / %s", VerdictRule(6), VerdictRule(1))
	}
}

func TestParseLabelsAndCSV(t *testing.T) {
	var b bytes.Buffer
	_ = binary.Write(&b, binary.BigEndian, [2]uint32{0x801, 3})
	b.Write([]byte{9, 0, 3})
	labels, err := ParseLabelsIDX(&b)
	if err != nil || !slices.Equal(labels, []int{9, 0, 3}) {
		t.Errorf("labels %v, %v", labels, err)
	}
	var bad bytes.Buffer
	_ = binary.Write(&bad, binary.BigEndian, [2]uint32{0x803, 3})
	if _, err := ParseLabelsIDX(&bad); err == nil {
		t.Error("an images file read as labels")
	}

	p := filepath.Join(t.TempDir(), "epochs.csv")
	if err := os.WriteFile(p, []byte("epoch,val_top1,ema_top1\n1,50.5,NaN\n2,60,NaN\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadCSV(p)
	if err != nil || len(rows) != 2 || rows[1]["val_top1"] != 60 || !math.IsNaN(rows[0]["ema_top1"]) {
		t.Errorf("rows %v, %v", rows, err)
	}
	if c := Column(rows, "missing"); len(c) != 2 || !math.IsNaN(c[0]) {
		t.Errorf("missing column %v", c)
	}
}

func TestAgreementAndStats(t *testing.T) {
	l := Logits{Data: []float32{0, 2, 1, 3, 3, 0}, N: 2, C: 3}
	if got := l.Argmax(); !slices.Equal(got, []int{1, 0}) {
		t.Errorf("argmax %v (ties go to the first)", got)
	}
	if a := Agreement([]int{1, 2, 3, 4}, []int{1, 2, 0, 4}); a != 75 {
		t.Errorf("agreement %v", a)
	}
	if a := Agreement([]int{1}, nil); !math.IsNaN(a) {
		t.Errorf("agreement with nothing %v", a)
	}
	s := Summarize([]float64{1, 2, 3, math.NaN()})
	if s.N != 3 || s.Mean != 2 || s.Std != 1 {
		t.Errorf("stats %+v", s)
	}
	if got := PM(s); got != "2.00 ± 1.00" {
		t.Errorf("pm %q", got)
	}
}

// FuzzParseLabelsIDX checks that any input is read or refused with an
// error, and that a read file's labels are its bytes.
func FuzzParseLabelsIDX(f *testing.F) {
	var ok bytes.Buffer
	_ = binary.Write(&ok, binary.BigEndian, [2]uint32{0x801, 3})
	ok.Write([]byte{9, 0, 3})
	f.Add(ok.Bytes())
	f.Add([]byte{0, 0, 8, 1, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		labels, err := ParseLabelsIDX(bytes.NewReader(b))
		if err != nil {
			return
		}
		if len(b) < 8+len(labels) {
			t.Fatalf("%d labels from %d bytes", len(labels), len(b))
		}
		for i, l := range labels {
			if l != int(b[8+i]) {
				t.Fatalf("label %d = %d, byte %d", i, l, b[8+i])
			}
		}
	})
}

// FuzzReadCSV checks that any metrics file is read or refused with an
// error, one map per data row with every header column.
func FuzzReadCSV(f *testing.F) {
	f.Add("epoch,val_top1\n1,50.5\n2,NaN\n")
	f.Add("a\n\"x\n")
	f.Fuzz(func(t *testing.T, text string) {
		p := filepath.Join(t.TempDir(), "m.csv")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		rows, err := ReadCSV(p)
		if err != nil {
			return
		}
		for _, r := range rows {
			if len(r) == 0 {
				t.Fatalf("an empty row from %q", text)
			}
		}
	})
}

// The command line of a report names the flags that differ from the
// defaults of its mode, and only those.
func TestFlagsLine(t *testing.T) {
	epochs, seeds := 10, 3
	defEpochs, defSeeds := 10, 3
	counts := []CountFlag{{Name: "seeds", Value: &seeds}, {Name: "epochs", Value: &epochs}}
	defs := []CountFlag{{Name: "seeds", Value: &defSeeds}, {Name: "epochs", Value: &defEpochs}}
	c := DefaultCommon("x")
	if got := FlagsLine(c, counts, defs, c.Data); got != "" {
		t.Errorf("defaults: %q", got)
	}
	epochs = 3
	if got, want := FlagsLine(c, counts, defs, c.Data, "--core"), " --epochs 3 --core"; got != want {
		t.Errorf("FlagsLine = %q, want %q", got, want)
	}
	c.Quick, c.TrainSubset, c.EvalSubset, epochs, seeds = true, QuickSubset, 1000, 1, 1
	if got, want := FlagsLine(c, counts, defs, c.Data), " --quick --eval-subset 1000"; got != want {
		t.Errorf("quick: FlagsLine = %q, want %q", got, want)
	}
}

// The command a report names is the one that wrote it: the folders, the
// binary and --report-only included when they are not the defaults.
func TestReportCommand(t *testing.T) {
	c := DefaultCommon("x")
	if got := ReportCommand("x", c, " --core"); got != "go run ./scripts/experiments/x --core" {
		t.Errorf("defaults: %q", got)
	}
	c.Work, c.Out, c.Bin, c.ReportOnly, c.BLAS = "/w/ft6", "/o", "/b/vit-train", true, "openblas"
	want := "go run ./scripts/experiments/x --core --report-only --bin /b/vit-train --blas openblas --work /w/ft6 --out /o"
	if got := ReportCommand("x", c, " --core"); got != want {
		t.Errorf("ReportCommand = %q, want %q", got, want)
	}
	if got := ContinueCommand("x", c, " --core"); got != "go run ./scripts/experiments/x --core --work /w/ft6 --out /o" {
		t.Errorf("ContinueCommand = %q", got)
	}
	// A folder inside the current one (the repository's docs) is named
	// relative to it, so that the command runs from any checkout.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	c.Out = filepath.Join(wd, "docs", "experiments")
	if got := ContinueCommand("x", c, ""); got != "go run ./scripts/experiments/x --work /w/ft6 --out docs/experiments" {
		t.Errorf("ContinueCommand with the report in the current folder = %q", got)
	}
}

func TestSeedCount(t *testing.T) {
	for _, c := range []struct {
		planned  int
		finished [][]int
		want     string
	}{
		{3, [][]int{{0, 1, 2}, {0, 1, 2}}, "3 seeds"},
		{1, [][]int{{0}}, "1 seed"},
		{3, nil, "3 seeds"},
		{3, [][]int{{0, 1, 2}, {0}}, "1–3 of 3 planned seeds per arm"},
		{6, [][]int{{0, 1, 2}, {0, 1, 2}}, "3 of 6 planned seeds per arm"},
		{3, [][]int{{0, 1, 2}, {}}, "0–3 of 3 planned seeds per arm"},
	} {
		if got := SeedCount(c.planned, c.finished, func(seeds []int) []int { return seeds }); got != c.want {
			t.Errorf("SeedCount(%d, %v) = %q, want %q", c.planned, c.finished, got, c.want)
		}
	}
}

// A work folder keeps the number of seeds its study started with.
func TestFixSeeds(t *testing.T) {
	work := t.TempDir()
	three, six := &Plan{Seeds: 3}, &Plan{Seeds: 6}
	if err := FixSeeds(work, six, false); err != nil {
		t.Fatalf("a report of a folder without a record: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, seedsFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("--report-only recorded the seeds: %v", err)
	}
	if err := FixSeeds(work, three, true); err != nil {
		t.Fatal(err)
	}
	if err := FixSeeds(work, three, true); err != nil {
		t.Errorf("the same seeds again: %v", err)
	}
	for _, record := range []bool{true, false} {
		if err := FixSeeds(work, six, record); err == nil || !strings.Contains(err.Error(), "--seeds 6: the study in "+work+" was started with 3 seeds") {
			t.Errorf("more seeds after the start (record %v): %v", record, err)
		}
	}
}

// A run on data.eval_subset scores the subset's items, drawn to cover the
// classes, not the first ones: in a class-sorted test set those are one
// class.
func TestAccuracyOfAnEvalSubset(t *testing.T) {
	labels := make([]int, 200)
	for i := range labels {
		labels[i] = i / 20 // sorted by class
	}
	idx := data.SubsetIndices(labels, 10, 30)
	pred := make([]int, len(idx))
	for i, j := range idx {
		pred[i] = labels[j]
	}
	if a := Accuracy(pred, labels); a != 100 {
		t.Errorf("accuracy of the subset's own labels: %v, want 100", a)
	}
}
