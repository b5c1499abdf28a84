package studytest

import (
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
