package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
)

// estimate is the full study's time at the default flags, extrapolated
// from a quick run.
type estimate struct {
	Rows []estimateRow
	// CPUS is the estimated CPU time; AtLoadS the wall-clock time at the
	// training throughput the quick run saw.
	CPUS, AtLoadS float64
	StartupS      float64 // CPU seconds a vit-train process spends outside its images
	Cores         int
	Load          string // /proc/loadavg when the estimate was made
}

type estimateRow struct {
	What            string
	Runs, Epochs    int
	CPUPerImageMs   float64 // per training image, evaluation included
	CPUS, AtLoadS   float64
	QuickImagesPerS float64
}

// estimateFull extrapolates each run of the default full study from the
// quick run of the same kind. CPU time: a process's start-up (the cheapest
// eval or logits process of the quick run, which reads the whole data set
// but runs few images) plus, per image, the quick run's CPU time beyond its
// start-up divided by its images (a training image, plus a third for each
// evaluated one); evaluation and logits processes run forward passes only,
// a third of a training image each. At the quick run's load: the same
// images at the training throughput its epochs.csv recorded.
func estimateFull(o options, quick *plan, res *results) *estimate {
	e := &estimate{StartupS: math.Inf(1), Cores: runtime.NumCPU()}
	for _, rr := range res.Runs {
		for _, a := range rr.Post {
			e.StartupS = math.Min(e.StartupS, a.CPUS)
		}
	}
	if math.IsInf(e.StartupS, 1) {
		e.StartupS = 0
	}
	full := defaults()
	full.data = o.data
	fp := newPlan(full, "")
	quickOf := map[string]string{}
	for _, r := range quick.runs {
		if k := runKind(r); quickOf[k] == "" {
			quickOf[k] = r.ID
		}
	}
	rows := map[string]*estimateRow{}
	var order []string
	for _, r := range fp.runs {
		k := runKind(r)
		row, ok := rows[k]
		if !ok {
			row = &estimateRow{What: kindLabel(r), Epochs: r.Epochs, CPUPerImageMs: math.NaN(), QuickImagesPerS: math.NaN()}
			rows[k] = row
			order = append(order, k)
		}
		row.Runs++
		qr, ok := res.Runs[quickOf[k]]
		if !ok {
			row.CPUS, row.AtLoadS = math.NaN(), math.NaN()
			continue
		}
		qs := qr.Spec
		qImages := float64(qs.Epochs) * (float64(qs.TrainImages) + float64(qs.EvalImages)/3)
		perImage := math.Max(qr.Done.CPUS-e.StartupS, 0) / qImages
		images := float64(r.Epochs) * (float64(r.TrainImages) + float64(r.EvalImages)/3)
		post := 2 * float64(r.EvalImages) / 3 // eval and test logits
		processes := 3.0
		if r.TrainLogits {
			post += float64(r.TrainImages) / 3
			processes++
		}
		row.CPUPerImageMs = 1000 * perImage
		row.CPUS += processes*e.StartupS + perImage*(images+post)
		ips := median(column(qr.Epochs, "images_per_s"))
		row.QuickImagesPerS = ips
		row.AtLoadS += (images + post) / ips
	}
	for _, k := range order {
		e.Rows = append(e.Rows, *rows[k])
		e.CPUS += rows[k].CPUS
		e.AtLoadS += rows[k].AtLoadS
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			e.Load = strings.Join(f[:3], " ")
		}
	}
	return e
}

// IdleS is the wall-clock time on this machine's cores, all free and
// busy: the CPU time divided by the cores (vit-train spreads each step
// over them), a lower bound.
func (e *estimate) IdleS() float64 { return e.CPUS / float64(e.Cores) }

// runKind groups the runs of one configuration (the seeds of an arm).
func runKind(r runSpec) string {
	if r.Arm != "" {
		return "arm:" + r.Arm
	}
	return r.ID
}

func kindLabel(r runSpec) string {
	for _, a := range allArms() {
		if a.Key == r.Arm {
			return a.Label
		}
	}
	switch r.ID {
	case teacherCNN:
		return "ResNet-20 teacher"
	case teacherViT:
		return "ViT teacher"
	case teacherCNNMatched:
		return "ResNet-20 teacher of the ViT's accuracy"
	case teacherCNN56:
		return "ResNet-20 teacher at 56 px"
	case checkLive:
		return "check: hard, live CNN, no augmentation"
	case checkNPY:
		return "check: hard, .npy logits, no augmentation"
	}
	return r.ID
}

func median(xs []float64) float64 {
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

// Summary is the estimate in one sentence.
func (e *estimate) Summary() string {
	return fmt.Sprintf("the full study (default flags) needs about %s of CPU time: about %s on %d idle cores; at the throughput of this run (load average %s), %s",
		hours(e.CPUS), hours(e.IdleS()), e.Cores, orDash(e.Load), hours(e.AtLoadS))
}

// Markdown renders the estimate.
func (e *estimate) Markdown() string {
	var b strings.Builder
	d := defaults()
	fmt.Fprintf(&b, "The full study at the default flags (%s, %s per student, teachers %d, %d, %d and %d epochs, %s of fine-tuning), "+
		"extrapolated from this run's CPU time per image (a vit-train process's start-up, %.1f CPU seconds, excluded) and from its training throughput. "+
		"Quick runs are short and a shared machine makes them noisy: take these as the order of magnitude.\n\n",
		plural(d.seeds, "seed"), plural(d.epochs, "epoch"), d.teacherEpochs, d.vitTeacherEpochs, d.matchedTeacherEpochs, d.teacher56Epochs, plural(d.finetuneEpochs, "epoch"), e.StartupS)
	b.WriteString("| runs | count | epochs each | CPU ms per training image | CPU time | wall-clock at this run's throughput |\n|---|---|---|---|---|---|\n")
	for _, r := range e.Rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s |\n", r.What, r.Runs, r.Epochs, fmt.Sprintf("%.1f", r.CPUPerImageMs), hours(r.CPUS), hours(r.AtLoadS))
	}
	fmt.Fprintf(&b, "| **total** | | | | **%s** | **%s** |\n\n", hours(e.CPUS), hours(e.AtLoadS))
	fmt.Fprintf(&b, "On %d idle cores that is about %s (CPU time ÷ cores); this run saw a load average of %s.\n", e.Cores, hours(e.IdleS()), orDash(e.Load))
	return b.String()
}

func hours(s float64) string {
	if math.IsNaN(s) {
		return "–"
	}
	return fmt.Sprintf("%.1f h", s/3600)
}
