package metrics

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestLogWritesAndTruncatesOnResume(t *testing.T) {
	dir := t.TempDir()
	m, err := openSteps(dir, "steps", -1)
	if err != nil {
		t.Fatal(err)
	}
	for s := 1; s <= 4; s++ {
		if err := m.Write([]Field{{"step", float64(s)}, {"loss", 1 / float64(s)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Write([]Field{{"step", 5}, {"loss", math.NaN()}}); err != nil {
		t.Fatal(err)
	}
	if err := m.Write([]Field{{"loss", 1}}); err == nil {
		t.Fatal("a record with other fields must be refused")
	}
	m.Close()

	// Resuming at step 2 drops steps 3–5 from both files.
	m, err = openSteps(dir, "steps", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Notes) != 0 {
		t.Errorf("notes for whole files: %q", m.Notes)
	}
	if err := m.Write([]Field{{"step", 3}, {"loss", 0.25}}); err != nil {
		t.Fatal(err)
	}
	m.Close()
	recs, err := Read(dir, "steps")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[2]["step"] != 3 || recs[2]["loss"] != 0.25 || recs[1]["loss"] != 0.5 {
		t.Fatalf("records after resume: %v", recs)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "steps.csv"))
	if got := string(csv); got != "step,loss\n1,1\n2,0.5\n3,0.25\n" {
		t.Fatalf("csv:\n%s", got)
	}
}

func writeLogs(t *testing.T, dir, jsonl, csv string) {
	t.Helper()
	for name, text := range map[string]string{"steps.jsonl": jsonl, "steps.csv": csv} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readLogText(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// What a run killed (or stopped) at any moment leaves is repaired on
// resume: partial last lines, partial or empty headers and empty files.
func TestMetricsResumeRepairsWhatAKillLeaves(t *testing.T) {
	for _, c := range []struct {
		name               string
		jsonl, csv         string
		wantJSONL, wantCSV string // after resuming at step 2 and writing step 3
		wantNotes          []string
	}{
		{"empty files", "", "", `{"step":3,"loss":3}` + "\n", "step,loss\n3,3\n", nil},
		{"lone newlines (older versions)", "\n", "\n", `{"step":3,"loss":3}` + "\n", "step,loss\n3,3\n",
			[]string{"steps.csv: dropped an empty header line"}},
		{"partial header", "", "step,lo", `{"step":3,"loss":3}` + "\n", "step,loss\n3,3\n",
			[]string{`steps.csv: dropped a partial header "step,lo"`}},
		{"partial last lines",
			`{"step":1,"loss":1}` + "\n" + `{"step":2,"loss":2}` + "\n" + `{"step":3,"lo`,
			"step,loss\n1,1\n2,2\n3,",
			`{"step":1,"loss":1}` + "\n" + `{"step":2,"loss":2}` + "\n" + `{"step":3,"loss":3}` + "\n",
			"step,loss\n1,1\n2,2\n3,3\n",
			[]string{`steps.jsonl: dropped a partial last line "{\"step\":3,\"lo"`, `steps.csv: dropped a partial last line "3,"`}},
		{"records after the checkpoint",
			`{"step":1,"loss":1}` + "\n" + `{"step":2,"loss":2}` + "\n" + `{"step":3,"loss":9}` + "\n" + `{"step":4,"loss":9}` + "\n",
			"step,loss\n1,1\n2,2\n3,9\n4,9\n",
			`{"step":1,"loss":1}` + "\n" + `{"step":2,"loss":2}` + "\n" + `{"step":3,"loss":3}` + "\n",
			"step,loss\n1,1\n2,2\n3,3\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeLogs(t, dir, c.jsonl, c.csv)
			m, err := openSteps(dir, "steps", 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Notes) != len(c.wantNotes) {
				t.Fatalf("notes %q, want %d", m.Notes, len(c.wantNotes))
			}
			for i, want := range c.wantNotes {
				if !strings.Contains(m.Notes[i], want) || !strings.Contains(m.Notes[i], dir) {
					t.Errorf("note %q does not name the file and say %q", m.Notes[i], want)
				}
			}
			if err := m.Write([]Field{{"step", 3}, {"loss", 3}}); err != nil {
				t.Fatal(err)
			}
			m.Close()
			if got := readLogText(t, dir, "steps.jsonl"); got != c.wantJSONL {
				t.Errorf("jsonl:\n%s\nwant:\n%s", got, c.wantJSONL)
			}
			if got := readLogText(t, dir, "steps.csv"); got != c.wantCSV {
				t.Errorf("csv:\n%s\nwant:\n%s", got, c.wantCSV)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 2 {
				t.Errorf("folder holds %d files, want the two logs (a temporary file left?)", len(entries))
			}
		})
	}
}

// A resumed epochs log is cut at the checkpoint's completed epochs, not
// its step: an epoch record and the checkpoint of an interrupted
// evaluation share a step.
func TestMetricsKeepByEpoch(t *testing.T) {
	dir := t.TempDir()
	m, err := Open(dir, "epochs", nil)
	if err != nil {
		t.Fatal(err)
	}
	for e := 1; e <= 3; e++ {
		if err := m.Write([]Field{{"epoch", float64(e)}, {"step", 6}}); err != nil {
			t.Fatal(err)
		}
	}
	m.Close()
	if m, err = Open(dir, "epochs", &Keep{Field: "epoch", Max: 1}); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if got := readLogText(t, dir, "epochs.csv"); got != "epoch,step\n1,6\n" {
		t.Fatalf("csv:\n%s", got)
	}
	if recs, err := Read(dir, "epochs"); err != nil || len(recs) != 1 {
		t.Fatalf("records %v, %v", recs, err)
	}
}

// Truncation replaces a log by renaming a new file over it (an old reader
// keeps the old file whole), and leaves a file it need not change alone.
func TestMetricsTruncationIsAtomic(t *testing.T) {
	dir := t.TempDir()
	writeLogs(t, dir, `{"step":1}`+"\n"+`{"step":2}`+"\n", "step\n1\n2\n")
	stat := func(name string) os.FileInfo {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	before := stat("steps.jsonl")
	m, err := openSteps(dir, "steps", 2)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if !os.SameFile(before, stat("steps.jsonl")) {
		t.Error("a log that keeps every record was rewritten")
	}
	if m, err = openSteps(dir, "steps", 1); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if os.SameFile(before, stat("steps.jsonl")) {
		t.Error("the truncated log is the same file: it was rewritten in place, not replaced")
	}
	if got := readLogText(t, dir, "steps.jsonl"); got != `{"step":1}`+"\n" {
		t.Errorf("jsonl after truncation: %q", got)
	}
}

// Lines that a kill cannot explain are errors naming the file and line.
func TestMetricsCorruptLinesAreErrors(t *testing.T) {
	for _, c := range []struct{ jsonl, csv, want string }{
		{`{"step":1}` + "\n" + "garbage\n" + `{"step":2}` + "\n", "", "steps.jsonl line 2"},
		{`{"loss":1}` + "\n", "", `steps.jsonl line 1: no "step" value`},
		{"", "step,loss\n1\n", "steps.csv line 2: 1 cells, the header has 2 columns"},
		{"", "loss\n1\n", `has no "step" column`},
		{"", "step,loss\nx,1\n", `steps.csv line 2: column "step"`},
		{"", "\nstep,loss\n", "the header line is empty but 1 lines follow it"},
	} {
		dir := t.TempDir()
		writeLogs(t, dir, c.jsonl, c.csv)
		_, err := openSteps(dir, "steps", 5)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dir) {
			t.Errorf("jsonl %q csv %q: want an error naming the file and %q, got %v", c.jsonl, c.csv, c.want, err)
		}
	}
}

// A write that fails (a full disk) is an error naming the file.
func TestMetricsWriteErrorNamesTheFile(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	dir := t.TempDir()
	m, err := openSteps(dir, "steps", -1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.jsonl.Close()
	m.jsonl = full
	err = m.Write([]Field{{"step", 1}})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "/dev/full") {
		t.Fatalf("want ENOSPC naming the file, got %v", err)
	}
}

// Read (plots of a killed run) skips a partial last line.
func TestReadSkipsAPartialLastLine(t *testing.T) {
	dir := t.TempDir()
	writeLogs(t, dir, `{"step":1,"loss":null}`+"\n"+`{"step":2,"lo`, "")
	recs, err := Read(dir, "steps")
	if err != nil || len(recs) != 1 || !math.IsNaN(recs[0]["loss"]) {
		t.Fatalf("records %v, %v", recs, err)
	}
}

// openSteps opens dir/name.jsonl and dir/name.csv afresh (keepUpToStep <
// 0) or keeping the records whose "step" is at most keepUpToStep.
func openSteps(dir, name string, keepUpToStep int) (*Log, error) {
	if keepUpToStep < 0 {
		return Open(dir, name, nil)
	}
	return Open(dir, name, &Keep{Field: "step", Max: float64(keepUpToStep)})
}
