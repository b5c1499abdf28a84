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
	// Every arm a few images apart by seed.
	correct := func(r study.Run) int { return 140 + len(r.Arm)%7 + r.Seed*r.Seed%5 }
	res := studytest.Finished(t, func(work string) *study.Plan {
		of := o
		of.Work = work
		return newPlan(of, filepath.Join(work, "configs"))
	}, correct)
	rep, err := analyse(o, newPlan(o, filepath.Join(o.Work, "configs")), res)
	if err != nil {
		t.Fatal(err)
	}
	return rep.Markdown()
}

// checkReport is studytest.Check of the report at path.
func checkReport(t *testing.T, path string) error {
	t.Helper()
	return studytest.Check(path, name, func(args []string) (string, string, error) {
		o, err := parseFlags(args)
		if err != nil {
			return "", "", err
		}
		return study.ReportName(name, o.core) + ".md", fixtureReport(t, o), nil
	})
}

// Every report of this study in docs/experiments is what the command it
// names writes.
func TestCommittedReportsAreWhatTheirCommandWrites(t *testing.T) {
	studytest.CheckCommitted(t, name, func(path string) error { return checkReport(t, path) })
}

// The check passes the report the command writes, and refuses one whose
// banner, setup or commands describe runs the command does not have.
func TestReportCheckRefusesWhatTheCommandDoesNotWrite(t *testing.T) {
	studytest.ChdirRoot(t)
	o, err := parseFlags([]string{"--seeds", "2", "--finetune-epochs", "6", "--core", "--work", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	md := fixtureReport(t, o)
	path := filepath.Join(t.TempDir(), "finetune_core.md")
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
		"a teacher in the banner": strings.Replace(md, "6 epochs of fine-tuning, against", "6 epochs of fine-tuning, a teacher of 15 epochs, against", 1),
		"arm (f) in the setup":    strings.Replace(md, "**Fine-tuning**, (d) and (e)", "**Fine-tuning**, (d), (e), (d′) and (f)", 1),
		"another folder":          strings.Replace(md, "--work ", "--work /elsewhere", 1),
		"a run it does not have":  strings.Replace(md, "```\n\nThe models'", "vit-train train --config resnet20.yaml\n```\n\nThe models'", 1),
	} {
		if bad == md {
			t.Fatalf("%s: the report did not change", what)
		}
		if err := checkReport(t, write(bad)); err == nil {
			t.Errorf("a report with %s passes", what)
		}
	}
}

// The reports in docs/superseded are not what today's command
// writes.
func TestSupersededReportsAreNotWhatTheCommandWrites(t *testing.T) {
	studytest.CheckSuperseded(t, name, func(path string) error { return checkReport(t, path) })
}
