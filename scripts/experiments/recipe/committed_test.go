package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/scripts/experiments/internal/studytest"
)

// fixtureReport is the report that the study of o writes from a fixture of
// finished runs (studytest.Finished) in place of its run folders, the
// yaml's recipe chosen: the parts of the report that the choice decides
// (the tables, the choice, the verdicts, the test run's command) are not
// part of its skeleton.
func fixtureReport(t *testing.T, o options) string {
	t.Helper()
	return analyseFixture(t, o, yamlKey).Markdown()
}

// checkReport is studytest.Check of the report at path.
func checkReport(t *testing.T, path string) error {
	t.Helper()
	return studytest.Check(path, name, func(args []string) (string, string, error) {
		o, err := parseFlags(args)
		if err != nil {
			return "", "", err
		}
		return name + ".md", fixtureReport(t, o), nil
	})
}

// Every report of this study in docs/experiments is what the command it
// names writes.
func TestCommittedReportsAreWhatTheirCommandWrites(t *testing.T) {
	studytest.CheckCommitted(t, name, func(path string) error { return checkReport(t, path) })
}

// The check passes the report the command writes, whichever recipe the
// runs chose, and refuses one whose setup or commands describe runs the
// command does not have.
func TestReportCheckRefusesWhatTheCommandDoesNotWrite(t *testing.T) {
	studytest.ChdirRoot(t)
	o, err := parseFlags([]string{"--seeds", "2", "--work", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	md := fixtureReport(t, o)
	path := filepath.Join(t.TempDir(), name+".md")
	write := func(s string) string {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if err := checkReport(t, write(md)); err != nil {
		t.Fatalf("the report its command writes: %v", err)
	}
	if err := checkReport(t, write(analyseFixture(t, o, candidates[0].Key).Markdown())); err != nil {
		t.Fatalf("the report of another choice: %v", err)
	}
	for what, bad := range map[string]string{
		"another number of seeds": strings.Replace(md, "seeds 0–1 per candidate", "seeds 0–2 per candidate", 1),
		"another held-out split":  strings.Replace(md, "`data.val_seed=1`", "`data.val_seed=2`", 1),
		"another folder":          strings.Replace(md, "--work ", "--work /elsewhere", 1),
		"a run it does not have":  strings.Replace(md, "```\n\nThe chosen", "vit-train train --set optim.lr=0.001\n```\n\nThe chosen", 1),
	} {
		if bad == md {
			t.Fatalf("%s: the report did not change", what)
		}
		if err := checkReport(t, write(bad)); err == nil {
			t.Errorf("a report with %s passes", what)
		}
	}
}
