package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// scripts/compare_pytorch.py's intervals (paired_ratio) against the same
// arithmetic in Go with gonum's Student's t distribution: its t
// quantiles, and the geometric mean and 95% interval of rounds' speed
// ratios, among them the rounds of a ViT-B/16 run.
func TestComparePyTorchIntervals(t *testing.T) {
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skipf("%s is missing: %v", python, err)
	}
	dfs := []float64{1, 2, 3, 4, 9, 14, 30, 120, 0.5, 2.5}
	rounds := [][2][]float64{
		{{131.4, 128.4, 160.3}, {251.8, 242.4, 287.3}},
		{{10, 11}, {30, 29}},
		{{5, 5, 5, 5}, {7, 7, 7, 7}},
		{{2.5}, {1}},
	}
	in, err := json.Marshal(map[string]any{"dfs": dfs, "rounds": rounds})
	if err != nil {
		t.Fatal(err)
	}
	const script = `
import json, sys
sys.path.insert(0, "../../scripts")
import compare_pytorch as c
args = json.loads(sys.argv[1])
print(json.dumps({"quantiles": [c.t_quantile(0.975, df) for df in args["dfs"]],
                  "ratios": [c.paired_ratio(ms, ref) for ms, ref in args["rounds"]]}))
`
	out, err := exec.Command(python, "-c", script, string(in)).Output()
	if err != nil {
		t.Fatalf("compare_pytorch.py: %v", err)
	}
	var got struct {
		Quantiles []float64
		Ratios    [][3]*float64
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("%s: the script gives %.12g, Go %.12g", what, got, want)
		}
	}
	for i, df := range dfs {
		near("t quantile", got.Quantiles[i], distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.975))
	}
	for i, r := range rounds {
		logs := make([]float64, len(r[0]))
		for j := range logs {
			logs[j] = math.Log(r[1][j] / r[0][j])
		}
		mean := stat.Mean(logs, nil)
		g := got.Ratios[i]
		near("geometric mean ratio", *g[0], math.Exp(mean))
		if len(logs) < 2 {
			if g[1] != nil || g[2] != nil {
				t.Errorf("rounds %v: an interval from one round", r)
			}
			continue
		}
		half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(logs) - 1)}.Quantile(0.975) * stat.StdDev(logs, nil) / math.Sqrt(float64(len(logs)))
		near("lower bound", *g[1], math.Exp(mean-half))
		near("upper bound", *g[2], math.Exp(mean+half))
	}
}
