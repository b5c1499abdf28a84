package train

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"testing"
)

// Each epoch's line reports how long the steps waited for data, a part of
// the epoch's seconds.
func TestEpochReportsDataWait(t *testing.T) {
	var out bytes.Buffer
	if _, err := Run(context.Background(), tinyConfig(t, "epochs=1"), Options{Dir: t.TempDir(), Out: &out}); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`img/s  ([0-9.]+) s \(([0-9.]+) s, ([0-9.]+)%, waiting for data\)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no data wait in the epoch line:\n%s", out.String())
	}
	total, _ := strconv.ParseFloat(m[1], 64)
	wait, _ := strconv.ParseFloat(m[2], 64)
	share, _ := strconv.ParseFloat(m[3], 64)
	if wait < 0 || wait > total+0.05 || share < 0 || share > 100.05 {
		t.Errorf("waited %v s (%v%%) of %v s", wait, share, total)
	}
}
