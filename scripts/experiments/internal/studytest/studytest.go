// Package studytest checks the reports that the study commands under
// scripts/experiments commit in docs/experiments: it writes a fixture of
// finished run folders for a study's plan, reads the command a report
// names, and compares the parts of two reports that the command's flags
// decide (its skeleton) as opposed to the parts the runs' numbers decide.
package studytest

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/formats/npy"
	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
)

// Classes is the fixture's number of classes, TestImages its test images
// and TrainImages its training images.
const (
	Classes     = 10
	TestImages  = 200
	TrainImages = 2 * TestImages
)

// Labels are the fixture's test labels: image i is of class i mod Classes.
func Labels() []int {
	l := make([]int, TestImages)
	for i := range l {
		l[i] = i % Classes
	}
	return l
}

// HeldOut are the training images that a fixture run holding out part of
// the training set (data.val_split) holds out: the last TestImages, whose
// labels are Labels().
func HeldOut() []int {
	idx := make([]int, TestImages)
	for i := range idx {
		idx[i] = TrainImages - TestImages + i
	}
	return idx
}

// WriteLabels writes Labels as dir/t10k-labels-idx1-ubyte and the
// training labels (image i of class i mod Classes) as
// dir/train-labels-idx1-ubyte, the files study.Collect reads.
func WriteLabels(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	train := make([]int, TrainImages)
	for i := range train {
		train[i] = i % Classes
	}
	for name, labels := range map[string][]int{"t10k-labels-idx1-ubyte": Labels(), "train-labels-idx1-ubyte": train} {
		b := binary.BigEndian.AppendUint32(nil, 0x801)
		b = binary.BigEndian.AppendUint32(b, uint32(len(labels)))
		for _, l := range labels {
			b = append(b, byte(l))
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// holdsOut says whether the run holds out part of the training set: its
// command sets data.val_split above 0.
func holdsOut(r study.Run) bool {
	for _, a := range r.Args {
		if v, ok := strings.CutPrefix(a, "data.val_split="); ok && v != "0" {
			return true
		}
	}
	return false
}

// Correct says how many of the TestImages a run classifies correctly.
type Correct func(r study.Run) int

// WriteFinished writes, for every run of p, what a finished run leaves for
// study.Collect: its study_done.json (one training process of a minute of
// wall-clock and two of CPU time), its evaluations' eval.json (both heads
// too, a point apart around the top-1), test_logits.npy that classify the
// first correct(r) evaluated images right and the others wrong, and an
// epochs.csv whose last epoch's validation top-1 is the same. A run that
// holds out part of the training set (data.val_split) evaluates the
// HeldOut images, which its val_split.json lists.
func WriteFinished(p *study.Plan, correct Correct) error {
	labels := Labels()
	for _, r := range p.Runs {
		if err := writeRun(r, labels, correct(r)); err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
	}
	return nil
}

// Finished collects a fixture of finished runs in a temporary folder: the
// test labels (WriteLabels) and, for every run of the plan that plan makes
// for that folder's work, what WriteFinished writes. It fails t unless
// every run is collected.
func Finished(t testing.TB, plan func(work string) *study.Plan, correct Correct) *study.Results {
	t.Helper()
	fix := t.TempDir()
	labels := filepath.Join(fix, "data")
	if err := WriteLabels(labels); err != nil {
		t.Fatal(err)
	}
	p := plan(filepath.Join(fix, "runs"))
	if err := WriteFinished(p, correct); err != nil {
		t.Fatal(err)
	}
	res, err := study.Collect(labels, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != len(p.Runs) {
		t.Fatalf("the fixture has %d finished runs of %d", len(res.Runs), len(p.Runs))
	}
	return res
}

func writeRun(r study.Run, labels []int, k int) error {
	if k < 0 || k > len(labels) {
		return fmt.Errorf("%d correct of %d", k, len(labels))
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return err
	}
	top1 := 100 * float64(k) / float64(len(labels))
	logits := make([]float32, len(labels)*Classes)
	for i, l := range labels {
		pred := l
		if i >= k {
			pred = (l + 1) % Classes
		}
		logits[i*Classes+pred] = 1
	}
	if err := npy.WriteFile(r.TestLogits(), logits, []int{len(labels), Classes}); err != nil {
		return err
	}
	if holdsOut(r) {
		rec := map[string]any{"fraction": float64(TestImages) / TrainImages, "train_images": TrainImages - TestImages,
			"val_images": TestImages, "evaluated": TestImages, "indices": HeldOut()}
		if err := writeJSON(filepath.Join(r.Dir, "val_split.json"), rec); err != nil {
			return err
		}
	}
	csv := "epoch,train_loss,val_top1,epoch_seconds\n"
	for e := 1; e <= r.Epochs; e++ {
		csv += fmt.Sprintf("%d,%g,%g,30\n", e, 1/float64(e), top1-float64(r.Epochs-e))
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "epochs.csv"), []byte(csv), 0o644); err != nil {
		return err
	}
	for _, e := range r.Evals {
		ev := study.EvalJSON{HeadResult: study.HeadResult{N: len(labels), Top1: top1},
			ClassHead: &study.HeadResult{N: len(labels), Top1: top1 + 0.5}, DistHead: &study.HeadResult{N: len(labels), Top1: top1 - 0.5}}
		if err := writeJSON(filepath.Join(r.EvalDir(e.Name), "eval.json"), ev); err != nil {
			return err
		}
	}
	done := study.Done{ID: r.ID, Args: r.Args, Attempts: []study.Attempt{{Args: r.Args, WallS: 60, CPUS: 120}},
		WallS: 60, CPUS: 120, Build: "default", Commit: "fixture", Binary: strings.Repeat("0", 64)}
	return writeJSON(r.DoneFile(), done)
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Committed lists the reports of the study named name in dir (NAME.md
// and NAME_*.md), by path.
func Committed(dir, name string) ([]string, error) {
	var out []string
	for _, pattern := range []string{name + ".md", name + "_*.md"} {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return nil, err
		}
		out = append(out, m...)
	}
	return out, nil
}

// commandRE finds the command a report names.
var commandRE = regexp.MustCompile("This report is written by `go run \\./scripts/experiments/([a-z_]+)([^`]*)`")

// Command is the study and the flags of the command the report md says
// wrote it.
func Command(md string) (name string, args []string, err error) {
	m := commandRE.FindStringSubmatch(md)
	if m == nil {
		return "", nil, errors.New("the report names no `go run ./scripts/experiments/…` command")
	}
	args, err = SplitArgs(m[2])
	return m[1], args, err
}

// SplitArgs splits a command line written by study.QuoteArgs into its
// arguments: words separated by spaces, a part in single quotes taken as
// it is, a character after a backslash outside quotes taken as it is
// (QuoteArgs writes a quote inside a quoted word as quote, backslash,
// quote, quote).
func SplitArgs(s string) ([]string, error) {
	var args []string
	var word strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			word.WriteByte(c)
		case c == '\'':
			quoted, inWord = true, true
		case c == '\\' && i+1 < len(s):
			i++
			word.WriteByte(s[i])
			inWord = true
		case c == ' ':
			if inWord {
				args = append(args, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unclosed quote in %q", s)
	}
	if inWord {
		args = append(args, word.String())
	}
	return args, nil
}

// Skeleton is the part of a report that its command's flags decide, line
// by line: the headings, the notes set off with ">", the line naming the
// command, the setup's items but for the build, the machine and the
// compute, the verdict rule, each claim without its verdict, and the
// code blocks (the vit-train commands). The tables, the numbers and the
// verdicts are the runs'.
func Skeleton(md string) []string {
	var out []string
	code, findings := false, false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			code = !code
			out = append(out, line)
		case code:
			out = append(out, line)
		case strings.HasPrefix(line, "#"):
			findings = line == "## Verdicts" || line == "## DeiT's findings, measured"
			out = append(out, line)
		case strings.HasPrefix(line, "> "), strings.HasPrefix(line, "This report is written by"),
			strings.HasPrefix(line, "The recipes are"), strings.HasPrefix(line, "Each verdict compares"),
			strings.HasPrefix(line, "The study ran these vit-train commands"):
			out = append(out, line)
		case findings && strings.HasPrefix(line, "- **"):
			claim, _, _ := strings.Cut(line, ".**")
			if i := strings.LastIndex(claim, ": "); i >= 0 {
				claim = claim[:i]
			}
			out = append(out, claim)
		case strings.HasPrefix(line, "- **Build and machine**"), strings.HasPrefix(line, "- **Compute**: the finished runs"):
		case strings.HasPrefix(line, "- **"):
			out = append(out, line)
		}
	}
	return out
}

// SameSkeleton compares the skeletons of a committed report and of the
// report its command writes, and describes the first difference.
func SameSkeleton(committed, written string) error {
	a, b := Skeleton(committed), Skeleton(written)
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Errorf("the report has\n\t%q\nwhere its command writes\n\t%q", x, y)
		}
	}
	return nil
}

// Writer parses the flags of a study's command and returns the file name
// of the report it writes and that report, written from a fixture of
// finished runs.
type Writer func(args []string) (file, md string, err error)

// Check says whether the report at path is what the command it names
// writes: the command is the study's (name), its flags parse, it writes a
// report of that file name, and the report's Skeleton is the one it
// writes.
func Check(path, name string, write Writer) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	md := string(b)
	study, args, err := Command(md)
	switch {
	case err != nil:
		return err
	case study != name:
		return fmt.Errorf("it names the study %s, not %s", study, name)
	}
	file, written, err := write(args)
	switch {
	case err != nil:
		return fmt.Errorf("the command it names does not parse: %w", err)
	case file != filepath.Base(path):
		return fmt.Errorf("its command writes %s", file)
	}
	return SameSkeleton(md, written)
}

// ChdirRoot makes the repository root the current folder, where the study
// commands run, and returns it.
func ChdirRoot(t testing.TB) string {
	t.Helper()
	root, err := study.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	return root
}

// CheckCommitted fails t unless check passes every report of the study
// name in docs/experiments: each is what the command it names writes.
func CheckCommitted(t *testing.T, name string, check func(path string) error) {
	t.Helper()
	for _, path := range committedIn(t, name, "docs", "experiments") {
		if err := check(path); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// CheckSuperseded fails t if check passes a report of the study name in
// docs/superseded: those are records that today's command
// does not write (their README says why); one that it writes again
// belongs in docs/experiments.
func CheckSuperseded(t *testing.T, name string, check func(path string) error) {
	t.Helper()
	for _, path := range committedIn(t, name, "docs", "superseded") {
		if err := check(path); err == nil {
			t.Errorf("%s is what its command writes: it belongs in docs/experiments", path)
		}
	}
}

// committedIn lists the study name's reports in the folder at the
// repository root's path elems, the root made the current folder.
func committedIn(t *testing.T, name string, elems ...string) []string {
	t.Helper()
	paths, err := Committed(filepath.Join(append([]string{ChdirRoot(t)}, elems...)...), name)
	if err != nil {
		t.Fatal(err)
	}
	return paths
}
