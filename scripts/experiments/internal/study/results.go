package study

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
	"slices"
	"strconv"

	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/npy"
)

// HeadResult is the part of vit-train eval's eval.json a study reads.
type HeadResult struct {
	N    int     `json:"n"`
	Top1 float64 `json:"top1"`
}

// EvalJSON is vit-train eval's eval.json: the top-1 of the model (both
// heads averaged for a distilled model) and of each head.
type EvalJSON struct {
	HeadResult
	ClassHead *HeadResult `json:"class_head"`
	DistHead  *HeadResult `json:"dist_head"`
}

// Logits is an (N, C) float32 matrix.
type Logits struct {
	Data []float32
	N, C int
}

// Result is what a finished run produced.
type Result struct {
	Spec Run
	Done Done
	// Eval is the run's first evaluation (for a run without one, its last
	// epoch's validation top-1 over its test logits' N); Evals are all its
	// evaluations by name.
	Eval   EvalJSON
	Evals  map[string]EvalJSON
	Epochs []map[string]float64 // epochs.csv
	Test   Logits               // test_logits.npy, over its evaluation split
	// Labels are the labels of the images the run evaluates, which its
	// Test logits score: the test labels or, for a run that held out part
	// of the training set (data.val_split), those of the held-out images
	// its val_split.json lists, in that order.
	Labels []int
	// HeldOut are the training-set indices of the images a run held out
	// for validation (its val_split.json); nil for a run evaluated on the
	// test set.
	HeldOut []int
	Params  string  // "0.14M", from the run's log
	TrainS  float64 // Σ epoch_seconds
	// Post are the vit-train eval and logits processes run on its
	// checkpoint.
	Post []Attempt
}

// Results are the finished runs by ID, and the test labels (Labels).
type Results struct {
	Runs   map[string]*Result
	Labels []int
}

// Collect reads every finished run of p (one whose evaluations and test
// logits exist), and the labels from the IDX folder data: the test
// labels, and each run's (Result.Labels); unfinished runs are left out.
func Collect(data string, p *Plan) (*Results, error) {
	res := &Results{Runs: map[string]*Result{}}
	var err error
	if res.Labels, err = ReadLabels(data); err != nil {
		return nil, err
	}
	var train []int // the training labels, read for the first run that held out images
	for _, r := range p.Runs {
		rr, err := ReadRun(r)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.ID, err)
		}
		rr.Labels = res.Labels
		if rr.HeldOut != nil {
			if train == nil {
				if train, err = readIDXLabels(data, "train-labels-idx1-ubyte"); err != nil {
					return nil, err
				}
			}
			if rr.Labels, err = heldOutLabels(train, rr.HeldOut); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", r.ID, filepath.Join(r.Dir, heldOutFile), err)
			}
		}
		res.Runs[r.ID] = rr
	}
	return res, nil
}

// heldOutFile is vit-train's record in a run folder of the training
// images the run held out for validation (data.val_split).
const heldOutFile = "val_split.json"

// heldOutLabels are the labels of the training images at indices.
func heldOutLabels(train, indices []int) ([]int, error) {
	out := make([]int, len(indices))
	for i, j := range indices {
		if j < 0 || j >= len(train) {
			return nil, fmt.Errorf("held-out index %d outside the %d training images", j, len(train))
		}
		out[i] = train[j]
	}
	return out, nil
}

// ReadRun reads a finished run's outputs; an error wrapping
// os.ErrNotExist means the run is not finished.
func ReadRun(r Run) (*Result, error) {
	rr := &Result{Spec: r, Evals: map[string]EvalJSON{}}
	if err := ReadJSON(r.DoneFile(), &rr.Done); err != nil {
		return nil, err
	}
	for _, e := range r.Evals {
		var ev EvalJSON
		if err := ReadJSON(r.evalJSON(e.Name), &ev); err != nil {
			return nil, err
		}
		rr.Evals[e.Name] = ev
	}
	if len(r.Evals) > 0 {
		rr.Eval = rr.Evals[r.Evals[0].Name]
	}
	a, err := npy.ReadFile(r.TestLogits())
	if err != nil {
		if _, serr := os.Stat(r.TestLogits()); errors.Is(serr, os.ErrNotExist) {
			return nil, serr
		}
		return nil, err
	}
	d, shape := a.Data, a.Shape
	if len(shape) != 2 {
		return nil, fmt.Errorf("%s: shape %v, want (N, C)", r.TestLogits(), shape)
	}
	rr.Test = Logits{Data: d, N: shape[0], C: shape[1]}
	var held struct {
		Indices []int `json:"indices"`
	}
	switch err := ReadJSON(filepath.Join(r.Dir, heldOutFile), &held); {
	case err == nil:
		rr.HeldOut = held.Indices
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	if rr.Epochs, err = ReadCSV(filepath.Join(r.Dir, "epochs.csv")); err != nil {
		return nil, err
	}
	for _, e := range rr.Epochs {
		if v := e["epoch_seconds"]; !math.IsNaN(v) {
			rr.TrainS += v
		}
	}
	if len(r.Evals) == 0 && len(rr.Epochs) > 0 {
		rr.Eval = EvalJSON{HeadResult: HeadResult{N: rr.Test.N, Top1: rr.Epochs[len(rr.Epochs)-1]["val_top1"]}}
	}
	rr.Params = paramsFromLog(r.LogFile())
	atts, err := readAttempts(r.attemptsFile())
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

// ReadJSON decodes the JSON file at path into v.
func ReadJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ReadCSV reads a metrics CSV (a header, then numbers) as one map per row;
// cells that are not numbers read as NaN.
func ReadCSV(path string) ([]map[string]float64, error) {
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

// Column is one metric of a metrics log, row by row (NaN where missing).
func Column(rows []map[string]float64, name string) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		v, ok := r[name]
		if !ok {
			v = math.NaN()
		}
		out[i] = v
	}
	return out
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

// CheckData checks that dir holds the four Fashion-MNIST IDX files
// (gzipped or not).
func CheckData(dir string) error {
	for _, name := range []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"} {
		if _, err := findIDX(dir, name); err != nil {
			return fmt.Errorf("%w (install Debian's dataset-fashion-mnist, or give --data)", err)
		}
	}
	return nil
}

// ReadLabels reads the test labels (t10k-labels-idx1-ubyte[.gz]).
func ReadLabels(dir string) ([]int, error) { return readIDXLabels(dir, "t10k-labels-idx1-ubyte") }

// readIDXLabels reads the IDX label file dir/name[.gz].
func readIDXLabels(dir, name string) ([]int, error) {
	path, err := findIDX(dir, name)
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
	labels, err := ParseLabelsIDX(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return labels, nil
}

// ParseLabelsIDX reads an IDX1 label file: magic 0x00000801, the count,
// then one byte per label.
func ParseLabelsIDX(r io.Reader) ([]int, error) {
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

// Argmax returns each row's largest column (the first on ties).
func (l Logits) Argmax() []int {
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

// Agreement is the percentage of rows where a and b predict the same
// class; NaN when they differ in size.
func Agreement(a, b []int) float64 {
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

// Accuracy is the percentage of predictions equal to their labels: all
// of labels, or the items of a data.eval_subset of len(pred) of them
// (data.SubsetIndices, over the labels' classes); NaN when there are
// fewer labels.
func Accuracy(pred, labels []int) float64 {
	if len(labels) < len(pred) || len(pred) == 0 {
		return math.NaN()
	}
	if len(pred) < len(labels) {
		idx := data.SubsetIndices(labels, slices.Max(labels)+1, len(pred))
		sub := make([]int, len(idx))
		for i, j := range idx {
			sub[i] = labels[j]
		}
		labels = sub
	}
	return Agreement(pred, labels)
}

// Median is the median of xs, NaNs left out (NaN when none is left).
func Median(xs []float64) float64 {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
