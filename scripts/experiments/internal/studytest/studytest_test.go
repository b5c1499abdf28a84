package studytest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
)

func TestCommandReadsWhatQuoteArgsWrote(t *testing.T) {
	args := []string{"--seeds", "6", "--work", "/a b/it's", "--data", ""}
	md := "# T\n\nThis report is written by `go run ./scripts/experiments/distillation " + study.QuoteArgs(args) + "`; every number…\n"
	name, got, err := Command(md)
	if err != nil || name != "distillation" || !slices.Equal(got, args) {
		t.Errorf("Command = %q %q %v, want distillation %q", name, got, err, args)
	}
	if _, _, err := Command("# T\n\nno command\n"); err == nil {
		t.Error("a report without a command")
	}
	if _, err := SplitArgs("--work 'open"); err == nil {
		t.Error("an unclosed quote")
	}
}

// SplitArgs undoes study.QuoteArgs.
func FuzzSplitArgs(f *testing.F) {
	for _, s := range []string{"--seeds 6 --core", "--work '/a b'", "'it'\\''s'", "", "''", "a  b", "'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args, err := SplitArgs(s)
		if err != nil {
			return
		}
		again, err := SplitArgs(study.QuoteArgs(args))
		if err != nil || !slices.Equal(again, args) {
			t.Errorf("SplitArgs(QuoteArgs(%q)) = %q, %v", args, again, err)
		}
	})
}

func TestSkeletonKeepsWhatTheFlagsDecide(t *testing.T) {
	md := strings.Join([]string{
		"# Title", "", "> **Short budget**: 3 epochs.", "",
		"This report is written by `go run ./scripts/experiments/x`; …", "", "## Setup", "",
		"- **Data**: 60000 images.", "- **Build and machine**: commit abc.", "- **Compute**: the finished runs' took 3 h.", "",
		"| arm | top-1 |", "|---|---|", "| a | 88.1 ± 0.2 |", "",
		"## Verdicts", "", "Each verdict compares the arms' mean top-1 over 3 seeds. RULE", "",
		"- **A beats B: holds.** A 88.1 vs B 87.0.", "",
		"## Commands", "", "```sh", "vit-train train --out w/a", "```",
	}, "\n")
	want := []string{"# Title", "> **Short budget**: 3 epochs.", "This report is written by `go run ./scripts/experiments/x`; …", "## Setup",
		"- **Data**: 60000 images.", "## Verdicts", "Each verdict compares the arms' mean top-1 over 3 seeds. RULE", "- **A beats B",
		"## Commands", "```sh", "vit-train train --out w/a", "```"}
	if got := Skeleton(md); !slices.Equal(got, want) {
		t.Errorf("Skeleton =\n%q\nwant\n%q", got, want)
	}
	other := strings.NewReplacer("88.1 ± 0.2", "70.0 ± 1.0", "holds", "does not hold", "commit abc", "commit def", "3 h", "9 h").Replace(md)
	if err := SameSkeleton(md, other); err != nil {
		t.Errorf("other numbers and verdicts: %v", err)
	}
	if err := SameSkeleton(md, strings.Replace(md, "A beats B", "A beats C", 1)); err == nil || !strings.Contains(err.Error(), "A beats C") {
		t.Errorf("another claim: %v", err)
	}
	if err := SameSkeleton(md, md+"\n> a note\n"); err == nil {
		t.Error("an added note")
	}
}

// A run that holds out training images is scored, and checked, against
// those images' labels (its val_split.json), not the test labels.
func TestHeldOutRunsAreCheckedAgainstTheirImages(t *testing.T) {
	plan := func(work string) *study.Plan {
		p := study.NewPlan()
		for i, id := range []string{"test", "heldout"} {
			args := []string{"train", "--out", filepath.Join(work, id)}
			if i == 1 {
				args = append(args, "--set", "data.val_split=0.5")
			}
			p.Add(study.Run{ID: id, Dir: filepath.Join(work, id), Epochs: 2, Args: args, Evals: []study.Eval{study.NativeEval}})
		}
		return p
	}
	res := Finished(t, plan, func(study.Run) int { return 150 })
	held := res.Runs["heldout"]
	if !slices.Equal(held.HeldOut, HeldOut()) || !slices.Equal(held.Labels, Labels()) || res.Runs["test"].HeldOut != nil {
		t.Fatalf("held-out run: indices %v, labels %v", held.HeldOut, held.Labels)
	}
	p := plan(filepath.Dir(held.Spec.Dir))
	if c := study.ConsistencyCheck(p, res); !c.OK {
		t.Fatalf("the fixture fails the check: %s", c.Detail)
	}
	// Held-out images one further on are of other classes: the logits no
	// longer score what vit-train eval reported.
	shifted := HeldOut()
	for i := range shifted {
		shifted[i]--
	}
	b, err := json.Marshal(map[string]any{"indices": shifted})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(held.Spec.Dir, "val_split.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := study.Collect(filepath.Join(filepath.Dir(filepath.Dir(held.Spec.Dir)), "data"), p)
	if err != nil {
		t.Fatal(err)
	}
	if c := study.ConsistencyCheck(p, again); c.OK || !strings.Contains(c.Detail, "heldout: top-1") {
		t.Errorf("held-out images of other labels pass the check: %+v", c)
	}
}
