package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
)

// writeRun writes a finished run's eval_test/eval.json under dir.
func writeRun(t *testing.T, dir, name, evalJSON string) {
	t.Helper()
	d := filepath.Join(dir, name, "eval_test")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "eval.json"), []byte(evalJSON), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadArmsPairsBySeed(t *testing.T) {
	dir := t.TempDir()
	// Full size 90, 92, 94 on seeds 1-3; N=74 loses 1, 2, 3 points; N=256
	// gains 1 on every seed. Written out of order on purpose.
	for _, r := range []struct{ name, top1 string }{
		{"n74-s3", "91"}, {"n0-s2", "92"}, {"n74-s1", "89"}, {"n256-s1", "91"}, {"n0-s1", "90"},
		{"n256-s3", "95"}, {"n0-s3", "94"}, {"n74-s2", "90"}, {"n256-s2", "93"},
	} {
		writeRun(t, dir, r.name, `{"n": 100, "top1": `+r.top1+`}`)
	}
	// An unfinished run and a foreign folder are left out.
	if err := os.MkdirAll(filepath.Join(dir, "n128-s1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	arms, err := readArms(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(arms) != 3 || arms[0].maxSide != 0 || arms[1].maxSide != 256 || arms[2].maxSide != 74 {
		t.Fatalf("arms %+v, want full size, 256, 74", arms)
	}
	for _, a := range arms {
		if len(a.seeds) != 3 || a.seeds[0] != 1 || a.seeds[1] != 2 || a.seeds[2] != 3 {
			t.Errorf("max side %d: seeds %v, want 1, 2, 3", a.maxSide, a.seeds)
		}
	}
	if got := arms[2].top1; got[0] != 89 || got[1] != 90 || got[2] != 91 {
		t.Errorf("N=74 top-1 %v, want 89, 90, 91 in seed order", got)
	}
	d := study.Compare(arms[2].seeds, arms[2].top1, arms[0].seeds, arms[0].top1)
	if !d.Paired || math.Abs(d.D+2) > 1e-12 || math.Abs(d.SE-1/math.Sqrt(3)) > 1e-12 {
		t.Errorf("N=74 − full: %+v, want paired −2 with standard error 1/√3", d)
	}

	// A seed that full size has not run yet is left out of the difference.
	writeRun(t, dir, "n74-s4", `{"top1": 50}`)
	if arms, err = readArms(dir); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := writeTable(&b, arms); err != nil {
		t.Fatal(err)
	}
	table := b.String()
	for _, want := range []string{
		"| 256 | 1, 2, 3 | 91.00, 93.00, 95.00 | 93.00 ± 2.00 | +1.00 (SE 0.00) |",
		// The same gain on every seed: full size does not beat 256.
		"| " + study.DoesNotHold + " |",
		"| 74 | 1, 2, 3, 4 | 89.00, 90.00, 91.00, 50.00 | 80.00 ± 20.02 | -2.00 (SE 0.58) (seeds 1, 2, 3) | -3.46 |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestReadArmsErrors(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, "n0-s1", `{"n": 100}`)
	if _, err := readArms(dir); err == nil || !strings.Contains(err.Error(), "no field top1") || !strings.Contains(err.Error(), "n0-s1") {
		t.Errorf("eval.json without top1: error %v, want one naming the file and the field", err)
	}
	writeRun(t, dir, "n0-s1", `{"top1": `)
	if _, err := readArms(dir); err == nil || !strings.Contains(err.Error(), "n0-s1") {
		t.Errorf("truncated eval.json: error %v, want one naming the file", err)
	}
	empty := t.TempDir()
	writeRun(t, empty, "n74-s1", `{"top1": 50}`)
	arms, err := readArms(empty)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeTable(&strings.Builder{}, arms); err == nil {
		t.Error("no full-size runs: no error")
	}
}
