package viz_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/viz"
)

// writeRun writes a small run's metrics with metrics.Log and reads
// them back as the trainer and `vit-train plot` do.
func writeRun(t *testing.T, dir string) (steps, epochs []map[string]float64) {
	t.Helper()
	sl, err := metrics.Open(dir, "steps", nil)
	if err != nil {
		t.Fatal(err)
	}
	el, err := metrics.Open(dir, "epochs", nil)
	if err != nil {
		t.Fatal(err)
	}
	const perEpoch = 4
	for e := 0; e < 3; e++ {
		for b := 1; b <= perEpoch; b++ {
			step := e*perEpoch + b
			if err := sl.Write([]metrics.Field{{Name: "step", Value: float64(step)}, {Name: "epoch", Value: float64(e) + float64(b)/perEpoch},
				{Name: "loss", Value: 2.3 / float64(step)}, {Name: "lr", Value: 1e-3 * float64(step) / 12}, {Name: "grad_norm", Value: 1},
				{Name: "images_per_s", Value: 100 + float64(step)}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := el.Write([]metrics.Field{{Name: "epoch", Value: float64(e + 1)}, {Name: "step", Value: float64((e + 1) * perEpoch)},
			{Name: "train_loss", Value: 2 - 0.5*float64(e)}, {Name: "val_loss", Value: 1.8 - 0.4*float64(e)},
			{Name: "val_top1", Value: 40 + 10*float64(e)}, {Name: "val_top5", Value: 90}, {Name: "ema_top1", Value: math.NaN()},
			{Name: "lr", Value: 1e-3}, {Name: "images_per_s", Value: 99 + float64(e)}, {Name: "epoch_seconds", Value: 3}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := sl.Close(); err != nil {
		t.Fatal(err)
	}
	if err := el.Close(); err != nil {
		t.Fatal(err)
	}
	if steps, err = metrics.Read(dir, "steps"); err != nil {
		t.Fatal(err)
	}
	if epochs, err = metrics.Read(dir, "epochs"); err != nil {
		t.Fatal(err)
	}
	return steps, epochs
}

func TestRunChartsData(t *testing.T) {
	steps, epochs := writeRun(t, t.TempDir())
	charts := viz.RunCharts(steps, epochs)
	byFile := map[string]viz.Chart{}
	for _, c := range charts {
		byFile[c.File] = c
	}
	// Each series must be exactly the metrics records' values.
	check := func(file string, i int, label string, recs []map[string]float64, y string) {
		t.Helper()
		c, ok := byFile[file]
		if !ok || i >= len(c.Series) {
			t.Fatalf("%s lacks series %d (%q): %+v", file, i, label, c)
		}
		s := c.Series[i]
		if s.Label != label || len(s.X) != len(recs) || len(s.Y) != len(recs) {
			t.Fatalf("%s series %d: %q with %d points, want %q with %d", file, i, s.Label, len(s.X), label, len(recs))
		}
		for j, r := range recs {
			if s.X[j] != r["epoch"] || s.Y[j] != r[y] {
				t.Errorf("%s %q point %d = (%g, %g), want epoch %g, %s %g", file, label, j, s.X[j], s.Y[j], r["epoch"], y, r[y])
			}
		}
	}
	check("loss.png", 0, "train (step)", steps, "loss")
	check("loss.png", 1, "train (epoch mean)", epochs, "train_loss")
	check("loss.png", 2, "validation", epochs, "val_loss")
	check("top1.png", 0, "model", epochs, "val_top1")
	check("lr.png", 0, "lr", steps, "lr")
	check("throughput.png", 0, "step", steps, "images_per_s")
	check("throughput.png", 1, "epoch", epochs, "images_per_s")
	if n := len(byFile["top1.png"].Series); n != 1 {
		t.Errorf("top1.png has %d series; the all-NaN ema_top1 must be left out", n)
	}
	if len(charts) != 4 {
		t.Errorf("%d charts, want 4", len(charts))
	}
	// A fractional epoch in the step records is the x value.
	if x := byFile["lr.png"].Series[0].X[1]; x != 0.5 {
		t.Errorf("second step's x = %g, want epoch 0.5", x)
	}
}

func TestExtractSeriesSkipsMissingAndNonFinite(t *testing.T) {
	recs := []map[string]float64{
		{"epoch": 1, "v": 3},
		{"epoch": 2},
		{"epoch": 3, "v": math.NaN()},
		{"epoch": math.Inf(1), "v": 4},
		{"epoch": 5, "v": 6},
	}
	s := viz.ExtractSeries("v", recs, "epoch", "v", true)
	if len(s.X) != 2 || s.X[0] != 1 || s.Y[0] != 3 || s.X[1] != 5 || s.Y[1] != 6 || !s.Points {
		t.Fatalf("series = %+v, want (1, 3), (5, 6)", s)
	}
}

func TestPlotRunWritesPNGs(t *testing.T) {
	dir := t.TempDir()
	steps, epochs := writeRun(t, dir)
	if err := viz.PlotRun(dir, steps, epochs); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"loss.png", "top1.png", "lr.png", "throughput.png"} {
		decodePNG(t, filepath.Join(dir, f), pixels(6), pixels(4))
	}
	// Rewriting (as after every epoch) replaces the files and leaves no
	// temporary files behind.
	if err := viz.PlotRun(dir, steps, epochs[:1]); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4+4 { // steps/epochs .jsonl/.csv and the four charts
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("run folder holds %v", names)
	}
}

func TestPlotRunWithoutRecords(t *testing.T) {
	dir := t.TempDir()
	if err := viz.PlotRun(dir, nil, nil); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("PlotRun without records wrote %d files", len(entries))
	}
}

func TestPlotRunBadFolder(t *testing.T) {
	steps, epochs := writeRun(t, t.TempDir())
	if err := viz.PlotRun(filepath.Join(t.TempDir(), "missing"), steps, epochs); err == nil {
		t.Fatal("PlotRun into a missing folder succeeded")
	}
}

func TestChartEpochTicks(t *testing.T) {
	c := viz.Chart{File: "x.png", Series: []viz.Series{{Label: "a", X: []float64{0.1, 2.9}, Y: []float64{1, 2}}}}
	p, err := c.Plot()
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, tk := range p.X.Tick.Marker.Ticks(0.1, 2.9) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if fmt.Sprint(labels) != "[1 2]" {
		t.Errorf("epoch labels on [0.1, 2.9] = %v, want [1 2]", labels)
	}
	n := 0
	for _, tk := range p.X.Tick.Marker.Ticks(0, 300) {
		if tk.Label != "" {
			n++
		}
	}
	if n < 5 || n > 11 {
		t.Errorf("%d epoch labels on [0, 300], want about ten", n)
	}
}

// TestRunChartsShortRun checks that a run that logged fewer than two steps
// still has a learning-rate chart, from its epochs, drawn as points.
func TestRunChartsShortRun(t *testing.T) {
	steps := []map[string]float64{{"step": 3, "epoch": 1, "loss": 2, "lr": 1e-3}}
	epochs := []map[string]float64{{"epoch": 1, "lr": 1e-3, "val_loss": 2}, {"epoch": 2, "lr": 5e-4, "val_loss": 1.5}}
	for _, c := range viz.RunCharts(steps, epochs) {
		if c.File != "lr.png" {
			continue
		}
		if s := c.Series[0]; len(s.X) != 2 || !s.Points || s.Y[1] != 5e-4 {
			t.Errorf("lr.png of a short run: %+v", s)
		}
		return
	}
	t.Error("a run with one logged step has no lr.png")
}

// TestLegendLeavesTheDataFree checks that a chart with a legend leaves
// room for it above (or below) every data point.
func TestLegendLeavesTheDataFree(t *testing.T) {
	steps, epochs := writeRun(t, t.TempDir())
	for _, c := range viz.RunCharts(steps, epochs) {
		if len(c.Series) < 2 {
			continue
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range c.Series {
			for _, y := range s.Y {
				lo, hi = math.Min(lo, y), math.Max(hi, y)
			}
		}
		p, err := c.Plot()
		if err != nil {
			t.Fatal(err)
		}
		room := 0.1 * float64(len(c.Series)) * (hi - lo) // about a line of the legend per series
		if c.LegendBottom && !(p.Y.Min <= lo-room) || !c.LegendBottom && !(p.Y.Max >= hi+room) {
			t.Errorf("%s: y axis [%g, %g] over data [%g, %g] leaves the legend no room", c.File, p.Y.Min, p.Y.Max, lo, hi)
		}
	}
}
