package tfevents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vit-train/vit-train/formats/atomicfile"
)

// writeFile creates an event file in dir with one scalar event per step.
func writeFile(t *testing.T, dir string, now time.Time, steps ...int64) string {
	t.Helper()
	files, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Create(NextPath(dir, files, now), now)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if err := w.Write(Event{Step: s, Values: []Value{ScalarValue("steps/loss", float64(s)/2)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.f.Name()
}

func steps(t *testing.T, path string) []int64 {
	t.Helper()
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, e := range f.Events[1:] {
		out = append(out, e.Step)
		if e.Values[0].Scalar != float32(e.Step)/2 {
			t.Fatalf("%s step %d: value %v", path, e.Step, e.Values[0].Scalar)
		}
	}
	return out
}

func TestCreateAndRead(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1700000000, 5e8)
	path := writeFile(t, dir, now, 1, 2, 3)
	if want := filepath.Join(dir, "events.out.tfevents.1700000000.vit-train"); path != want {
		t.Fatalf("path %s, want %s", path, want)
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Events) != 4 || f.Events[0].FileVersion != FileVersion || f.Events[0].WallTime != 1700000000.5 || f.Partial != -1 {
		t.Fatalf("%+v", f)
	}
	if got := steps(t, path); len(got) != 3 || got[2] != 3 {
		t.Fatalf("steps %v", got)
	}
	if f.Events[1].WallTime == 0 {
		t.Fatal("Write left the wall time zero")
	}
}

// TestCreateSortsLast: files created in the same second, or with a clock
// set back, still sort after the existing ones.
func TestCreateSortsLast(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1700000000, 0)
	a := writeFile(t, dir, now)
	b := writeFile(t, dir, now)
	c := writeFile(t, dir, now.Add(-time.Hour))
	d := writeFile(t, dir, now.Add(time.Hour))
	files, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{a, b, c, d}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Fatalf("files in name order %v, created %v", files, want)
	}
	if !strings.HasSuffix(c, ".1700000002.vit-train") {
		t.Fatalf("a file created with the clock set back is %s", c)
	}
	// A name listed but removed since is not taken again.
	if err := os.Remove(d); err != nil {
		t.Fatal(err)
	}
	if p := NextPath(dir, files, now.Add(time.Hour)); p <= d {
		t.Fatalf("NextPath %s after removing %s", p, d)
	}
	if _, err := Create(a, now); err == nil {
		t.Fatal("Create replaced an existing file")
	}
}

func TestFilesSkipsOthers(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, time.Unix(1, 0), 1)
	for _, name := range []string{"steps.csv", atomicfile.TempPrefix + filepath.Base(path) + atomicfile.TempInfix + "123"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, FilePrefix+"folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := Files(dir)
	if err != nil || len(files) != 1 || files[0] != path {
		t.Fatalf("%v, %v", files, err)
	}
}

func TestFilter(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, time.Unix(1, 0), 1, 2, 3, 4)
	before, _ := os.ReadFile(path)
	upTo := func(max int64) func(Event) bool { return func(e Event) bool { return e.Step <= max } }

	notes, err := Filter(path, upTo(10))
	if err != nil || len(notes) != 0 {
		t.Fatalf("%v, %v", notes, err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("Filter rewrote a file it keeps whole")
	}

	// A partial last record: a writer killed in the middle of step 5.
	fifth, _ := Event{Step: 5, Values: []Value{ScalarValue("steps/loss", 2.5)}}.Marshal()
	rec := AppendRecord(nil, fifth)
	if err := os.WriteFile(path, append(before, rec[:len(rec)-3]...), 0o644); err != nil {
		t.Fatal(err)
	}
	notes, err = Filter(path, upTo(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "partial last record at offset") || !strings.Contains(notes[0], path) {
		t.Fatalf("notes %q", notes)
	}
	if got := steps(t, path); len(got) != 2 || got[1] != 2 {
		t.Fatalf("steps after filtering %v", got)
	}

	// Nothing kept but the file version: the file goes.
	if _, err := Filter(path, upTo(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a file left with no events is still there: %v", err)
	}

	// An empty file (a writer killed before its first record) goes too.
	empty := filepath.Join(dir, FilePrefix+"2.vit-train")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Filter(empty, upTo(10)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Fatalf("an empty event file is still there: %v", err)
	}
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, time.Unix(1, 0), 1, 2)
	raw, _ := os.ReadFile(path)
	raw[len(raw)-6] ^= 1 // a byte of the last record's data
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "data checksum") {
		t.Fatalf("corrupt record: %v", err)
	}
	if _, err := Filter(path, func(Event) bool { return true }); err == nil {
		t.Fatal("Filter accepted a corrupt record")
	}

	// A first event that is not the file version.
	other, _ := Event{Step: 1, Values: []Value{ScalarValue("a", 1)}}.Marshal()
	if err := os.WriteFile(path, AppendRecord(nil, other), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), "file_version") {
		t.Fatalf("no file version: %v", err)
	}
}
