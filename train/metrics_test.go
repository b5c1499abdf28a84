package train

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMetricsLogWritesAndTruncatesOnResume(t *testing.T) {
	dir := t.TempDir()
	m, err := OpenMetrics(dir, "steps", -1)
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
	m, err = OpenMetrics(dir, "steps", 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Write([]Field{{"step", 3}, {"loss", 0.25}}); err != nil {
		t.Fatal(err)
	}
	m.Close()
	recs, err := ReadMetrics(dir, "steps")
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
	if strings.Count(string(csv), "step,loss") != 1 {
		t.Fatal("header repeated")
	}
}
