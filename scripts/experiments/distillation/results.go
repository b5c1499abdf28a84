package main

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/vit-train/vit-train/formats/npy"
)

// headResult is the part of vit-train eval's eval.json the study reads.
type headResult struct {
	N    int     `json:"n"`
	Top1 float64 `json:"top1"`
}

type evalJSON struct {
	headResult
	ClassHead *headResult `json:"class_head"`
	DistHead  *headResult `json:"dist_head"`
}

// logits is an (N, C) float32 matrix.
type logits struct {
	Data []float32
	N, C int
}

// runResult is what a finished run produced.
type runResult struct {
	Spec   runSpec
	Done   doneRecord
	Eval   evalJSON
	Epochs []map[string]float64 // epochs.csv
	Test   logits               // test_logits.npy
	Params string               // "0.14M", from the run's log
	TrainS float64              // Σ epoch_seconds
	// Post are the vit-train eval and logits processes run on its
	// checkpoint.
	Post []attempt
}

// results are the finished runs by ID, and the test labels.
type results struct {
	Runs   map[string]*runResult
	Labels []int
}

// collect reads every finished run of p (one whose evaluation and test
// logits exist); unfinished runs are left out.
func collect(o options, p *plan) (*results, error) {
	res := &results{Runs: map[string]*runResult{}}
	var err error
	if res.Labels, err = readLabels(o.data); err != nil {
		return nil, err
	}
	for _, r := range p.runs {
		rr, err := readRun(r)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.ID, err)
		}
		res.Runs[r.ID] = rr
	}
	return res, nil
}

func readRun(r runSpec) (*runResult, error) {
	rr := &runResult{Spec: r}
	if err := readJSON(r.doneFile(), &rr.Done); err != nil {
		return nil, err
	}
	if !r.ResNet {
		if err := readJSON(filepath.Join(r.evalDir(), "eval.json"), &rr.Eval); err != nil {
			return nil, err
		}
	}
	a, err := npy.ReadFile(r.testLogits())
	if err != nil {
		if _, serr := os.Stat(r.testLogits()); errors.Is(serr, os.ErrNotExist) {
			return nil, serr
		}
		return nil, err
	}
	d, shape := a.Data, a.Shape
	if len(shape) != 2 {
		return nil, fmt.Errorf("%s: shape %v, want (N, C)", r.testLogits(), shape)
	}
	rr.Test = logits{Data: d, N: shape[0], C: shape[1]}
	if rr.Epochs, err = readCSV(filepath.Join(r.Dir, "epochs.csv")); err != nil {
		return nil, err
	}
	for _, e := range rr.Epochs {
		if v := e["epoch_seconds"]; !math.IsNaN(v) {
			rr.TrainS += v
		}
	}
	if r.ResNet && len(rr.Epochs) > 0 {
		rr.Eval = evalJSON{headResult: headResult{N: rr.Test.N, Top1: rr.Epochs[len(rr.Epochs)-1]["val_top1"]}}
	}
	rr.Params = paramsFromLog(r.logFile())
	atts, err := readAttempts(r.Dir + ".attempts.jsonl")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, a := range atts {
		if a.Args[0] == "eval" || a.Args[0] == "logits" {
			rr.Post = append(rr.Post, a)
		}
	}
	return rr, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// readCSV reads a metrics CSV (a header, then numbers) as one map per row;
// cells that are not numbers read as NaN.
func readCSV(path string) ([]map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	var out []map[string]float64
	for _, row := range rows[1:] {
		m := map[string]float64{}
		for i, name := range rows[0] {
			v := math.NaN()
			if i < len(row) {
				if x, err := strconv.ParseFloat(row[i], 64); err == nil {
					v = x
				}
			}
			m[name] = v
		}
		out = append(out, m)
	}
	return out, nil
}

var paramsRE = regexp.MustCompile(`^model \S+: ([0-9.]+M) parameters`)

// paramsFromLog finds the parameter count vit-train train prints first.
func paramsFromLog(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := paramsRE.FindStringSubmatch(sc.Text()); m != nil {
			return m[1]
		}
	}
	return ""
}

// findIDX returns dir/name.gz or dir/name, whichever exists.
func findIDX(dir, name string) (string, error) {
	for _, p := range []string{filepath.Join(dir, name+".gz"), filepath.Join(dir, name)} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("neither %s.gz nor %s in %s", name, name, dir)
}

// readLabels reads the test labels (t10k-labels-idx1-ubyte[.gz]).
func readLabels(dir string) ([]int, error) {
	path, err := findIDX(dir, "t10k-labels-idx1-ubyte")
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if filepath.Ext(path) == ".gz" {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	return parseLabelsIDX(r)
}

// parseLabelsIDX reads an IDX1 label file: magic 0x00000801, the count,
// then one byte per label.
func parseLabelsIDX(r io.Reader) ([]int, error) {
	var hdr [2]uint32
	if err := binary.Read(r, binary.BigEndian, &hdr); err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	if hdr[0] != 0x801 {
		return nil, fmt.Errorf("labels: magic %#x, want 0x801", hdr[0])
	}
	if hdr[1] > 1<<24 {
		return nil, fmt.Errorf("labels: %d labels is too many", hdr[1])
	}
	b := make([]byte, hdr[1])
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	out := make([]int, len(b))
	for i, v := range b {
		out[i] = int(v)
	}
	return out, nil
}

// argmax returns each row's largest column (the first on ties).
func (l logits) argmax() []int {
	out := make([]int, l.N)
	for i := range out {
		row := l.Data[i*l.C : (i+1)*l.C]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		out[i] = best
	}
	return out
}

// agreement is the percentage of rows where a and b predict the same
// class; NaN when they differ in size.
func agreement(a, b []int) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return math.NaN()
	}
	same := 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
	}
	return 100 * float64(same) / float64(len(a))
}

// accuracy is the percentage of predictions equal to the first len(pred)
// labels; NaN when there are fewer labels.
func accuracy(pred, labels []int) float64 {
	if len(labels) < len(pred) || len(pred) == 0 {
		return math.NaN()
	}
	return agreement(pred, labels[:len(pred)])
}

// stats are a sample's mean and standard deviation (n−1; NaN for one value).
type stats struct {
	Mean, Std float64
	N         int
}

func summarize(xs []float64) stats {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	s := stats{Mean: math.NaN(), Std: math.NaN(), N: len(v)}
	if len(v) == 0 {
		return s
	}
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	s.Mean = sum / float64(len(v))
	if len(v) > 1 {
		ss := 0.0
		for _, x := range v {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.Std = math.Sqrt(ss / float64(len(v)-1))
	}
	return s
}
