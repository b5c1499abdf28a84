package study

import (
	"math"
	"testing"
)

// TestEstimateFull extrapolates a full plan of two arms from a quick run
// of each: CPU time per training image is the quick run's threads over its
// median training images/s, not its CPU time over its few images (which
// here includes 30 s of fixed costs), plus one start-up per process.
func TestEstimateFull(t *testing.T) {
	run := func(id, arm string, epochs, train, eval int) Run {
		return Run{ID: id, Arm: arm, Epochs: epochs, TrainImages: train, EvalImages: eval, Evals: []Eval{NativeEval}}
	}
	quick := &Plan{Runs: []Run{run("a/seed0", "a", 1, 384, 384), run("b/seed0", "b", 2, 384, 384)}}
	full := &Plan{Runs: []Run{
		run("a/seed0", "a", 10, 60000, 10000), run("a/seed1", "a", 10, 60000, 10000),
		run("b/seed0", "b", 4, 60000, 10000),
	}}
	epochs := func(ips ...float64) []map[string]float64 {
		var rows []map[string]float64
		for _, v := range ips {
			rows = append(rows, map[string]float64{"images_per_s": v})
		}
		return rows
	}
	res := &Results{Runs: map[string]*Result{
		// a: 2 threads at a median of 200 images/s: 10 ms per image.
		"a/seed0": {Done: Done{CPUS: 40, Attempts: []Attempt{{Threads: 2, CPUS: 40}}}, Epochs: epochs(200),
			Post: []Attempt{{CPUS: 1.5}, {CPUS: 2}}},
		// b: every CPU (threads not recorded) at a median of 100.
		"b/seed0": {Done: Done{CPUS: 30, Attempts: []Attempt{{CPUS: 30}}}, Epochs: epochs(50, 100, 400),
			Post: []Attempt{{CPUS: 3}}},
	}}
	e := EstimateFull(quick, full, res, func(r Run) string { return r.Arm })
	if e.StartupS != 1.5 {
		t.Fatalf("start-up %v CPU seconds, want the cheapest eval or logits process's 1.5", e.StartupS)
	}
	if len(e.Rows) != 2 || e.Rows[0].What != "a" || e.Rows[0].Runs != 2 || e.Rows[1].Runs != 1 {
		t.Fatalf("rows %+v, want a (2 runs) then b (1)", e.Rows)
	}
	// Per run: epochs of (train + eval/3) images, then the evaluation and
	// the test logits (eval/3 images each), over 3 processes.
	perRun := func(perImage float64, epochs int) float64 {
		images := float64(epochs)*(60000+10000.0/3) + 2*10000.0/3
		return 3*1.5 + perImage*images
	}
	wantA := 2 * perRun(2.0/200, 10)
	wantB := perRun(float64(e.Cores)/100, 4)
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"a's CPU ms per image", e.Rows[0].CPUPerImageMs, 10},
		{"a's CPU seconds", e.Rows[0].CPUS, wantA},
		{"b's CPU ms per image", e.Rows[1].CPUPerImageMs, 1000 * float64(e.Cores) / 100},
		{"b's CPU seconds", e.Rows[1].CPUS, wantB},
		{"the total", e.CPUS, wantA + wantB},
		{"a's wall-clock at its throughput", e.Rows[0].AtLoadS, 2 * (10*(60000+10000.0/3) + 2*10000.0/3) / 200},
	} {
		if math.Abs(c.got-c.want) > 1e-9*c.want {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
}
