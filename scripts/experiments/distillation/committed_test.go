package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
	"github.com/vit-train/vit-train/scripts/experiments/internal/studytest"
)

// fixtureReport is the report that the study of o writes from a fixture of
// finished runs (studytest.WriteFinished) in place of its run folders.
func fixtureReport(t *testing.T, o options) string {
	t.Helper()
	// Every arm's students a few images apart by seed; the two exactness
	// check runs alike.
	correct := func(r study.Run) int {
		if strings.HasPrefix(r.ID, "checks/") {
			return 150
		}
		return 140 + len(r.Arm)%7 + r.Seed*r.Seed%5
	}
	res := studytest.Finished(t, func(work string) *study.Plan {
		of := o
		of.Work = work
		return newPlan(of, filepath.Join(work, "configs"))
	}, correct)
	return analyse(o, newPlan(o, filepath.Join(o.Work, "configs")), res).Markdown()
}

// checkReport is studytest.Check of the report at path.
func checkReport(t *testing.T, path string) error {
	t.Helper()
	return studytest.Check(path, name, func(args []string) (string, string, error) {
		o, err := parseFlags(args)
		if err != nil {
			return "", "", err
		}
		return reportName(o) + ".md", fixtureReport(t, o), nil
	})
}

// Every report of this study in docs/experiments is what the command it
// names writes.
func TestCommittedReportsAreWhatTheirCommandWrites(t *testing.T) {
	studytest.CheckCommitted(t, name, func(path string) error { return checkReport(t, path) })
}

// The check passes the report the command writes, and refuses one with a
// flag the command no longer has, a note added by hand, or a claim or a
// rule that the command does not write.
func TestReportCheckRefusesWhatTheCommandDoesNotWrite(t *testing.T) {
	studytest.ChdirRoot(t)
	o, err := parseFlags([]string{"--seeds", "2", "--core", "--work", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	md := fixtureReport(t, o)
	path := filepath.Join(t.TempDir(), "distillation_core.md")
	write := func(s string) string {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if err := checkReport(t, write(md)); err != nil {
		t.Fatalf("the report its command writes: %v", err)
	}
	for what, bad := range map[string]string{
		"a removed flag":  strings.Replace(md, " --core", " --core --teacher56-epochs 1", 1),
		"a note by hand":  strings.Replace(md, "## Setup", "> The verdicts below are the rule of an earlier commit.\n\n## Setup", 1),
		"another claim":   strings.Replace(md, "Hard distillation beats soft distillation", "Fine-tuning at 56 px with distillation improves on the 28 px student", 1),
		"the 2-SE rule":   strings.Replace(md, study.VerdictRule(2), "A claim holds when each difference it rests on is positive by more than twice its standard error.", 1),
		"another command": strings.Replace(md, "vit-train train --config", "vit-train train --set model.img_size=56 --config", 1),
	} {
		if bad == md {
			t.Fatalf("%s: the report did not change", what)
		}
		if err := checkReport(t, write(bad)); err == nil {
			t.Errorf("a report with %s passes", what)
		}
	}
	if err := checkReport(t, filepath.Join(filepath.Dir(path), "distillation.md")); err == nil {
		t.Error("a missing report passes")
	}
	renamed := filepath.Join(t.TempDir(), "distillation.md")
	if err := os.WriteFile(renamed, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkReport(t, renamed); err == nil || !strings.Contains(err.Error(), "writes distillation_core.md") {
		t.Errorf("a --core report under the full study's name: %v", err)
	}
}

// The reports in docs/superseded are not what today's command
// writes.
func TestSupersededReportsAreNotWhatTheCommandWrites(t *testing.T) {
	studytest.CheckSuperseded(t, name, func(path string) error { return checkReport(t, path) })
}
