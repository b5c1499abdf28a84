package train

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"

	"github.com/vit-train/vit-train/formats/atomicfile"
)

// Scorer accumulates classification metrics over batches of logits.
type Scorer struct {
	classes   int
	n         int
	lossSum   float64
	top1      int
	top5      int
	confusion []int // (classes, classes): row = true label, column = prediction
}

// NewScorer returns an empty Scorer for the given number of classes.
func NewScorer(classes int) *Scorer {
	return &Scorer{classes: classes, confusion: make([]int, classes*classes)}
}

// Add scores logits (B, classes) against labels (B): cross-entropy, top-1,
// top-5 and the confusion matrix.
func (s *Scorer) Add(logits []float32, labels []int) {
	c := s.classes
	for b, y := range labels {
		row := logits[b*c : (b+1)*c]
		mx := math.Inf(-1)
		best := 0
		for j, v := range row {
			if float64(v) > mx {
				mx, best = float64(v), j
			}
		}
		sum := 0.0
		rank := 0 // classes scoring strictly above the true one
		for j, v := range row {
			sum += math.Exp(float64(v) - mx)
			if v > row[y] || (v == row[y] && j < y) {
				rank++
			}
		}
		s.lossSum += mx + math.Log(sum) - float64(row[y])
		if rank == 0 {
			s.top1++
		}
		if rank < 5 {
			s.top5++
		}
		s.confusion[y*c+best]++
		s.n++
	}
}

// Result is the summary of a Scorer.
type Result struct {
	N    int     `json:"n"`
	Loss float64 `json:"loss"`
	Top1 float64 `json:"top1"`
	Top5 float64 `json:"top5"`
	// PerClass is each class's top-1 accuracy, 0 for a class with no
	// images (its row of Confusion sums to 0).
	PerClass []float64 `json:"per_class_top1"`
	// Confusion[i][j] counts images of class i predicted as j.
	Confusion [][]int `json:"confusion"`
}

// Result returns accuracies in percent and the mean loss.
func (s *Scorer) Result() Result {
	r := Result{N: s.n}
	if s.n == 0 {
		return r
	}
	r.Loss = s.lossSum / float64(s.n)
	r.Top1 = 100 * float64(s.top1) / float64(s.n)
	r.Top5 = 100 * float64(s.top5) / float64(s.n)
	c := s.classes
	for i := 0; i < c; i++ {
		row := s.confusion[i*c : (i+1)*c]
		r.Confusion = append(r.Confusion, append([]int(nil), row...))
		total := 0
		for _, v := range row {
			total += v
		}
		acc := 0.0
		if total > 0 {
			acc = 100 * float64(row[i]) / float64(total)
		}
		r.PerClass = append(r.PerClass, acc)
	}
	return r
}

// WriteReport writes per_class.csv and confusion.csv into dir, with class
// names, each replaced atomically.
func (r Result) WriteReport(dir, prefix string, names []string) error {
	name := func(i int) string {
		if i < len(names) {
			return names[i]
		}
		return strconv.Itoa(i)
	}
	write := func(file string, rows [][]string) error {
		return atomicfile.Write(filepath.Join(dir, file), func(w io.Writer) error {
			return csv.NewWriter(w).WriteAll(rows)
		})
	}
	rows := [][]string{{"class", "name", "images", "top1"}}
	for i, acc := range r.PerClass {
		total := 0
		for _, v := range r.Confusion[i] {
			total += v
		}
		top1 := "" // no images of the class: no accuracy
		if total > 0 {
			top1 = fmt.Sprintf("%.2f", acc)
		}
		rows = append(rows, []string{strconv.Itoa(i), name(i), strconv.Itoa(total), top1})
	}
	if err := write(prefix+"per_class.csv", rows); err != nil {
		return err
	}
	head := []string{"true\\predicted"}
	for i := range r.Confusion {
		head = append(head, name(i))
	}
	rows = [][]string{head}
	for i, row := range r.Confusion {
		line := []string{name(i)}
		for _, v := range row {
			line = append(line, strconv.Itoa(v))
		}
		rows = append(rows, line)
	}
	return write(prefix+"confusion.csv", rows)
}
