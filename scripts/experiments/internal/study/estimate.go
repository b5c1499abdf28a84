package study

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
)

// Estimate is a full study's time, extrapolated from a quick run.
type Estimate struct {
	Rows []EstimateRow
	// CPUS is the estimated CPU time; AtLoadS the wall-clock time at the
	// training throughput the quick run saw.
	CPUS, AtLoadS float64
	StartupS      float64 // CPU seconds a vit-train process spends outside its images
	Cores         int
	Load          string // /proc/loadavg when the estimate was made
}

// EstimateRow is the estimate of one kind of run (an arm's seeds, or one
// teacher).
type EstimateRow struct {
	What            string
	Runs, Epochs    int
	CPUPerImageMs   float64 // per training image, evaluation included
	CPUS, AtLoadS   float64
	QuickImagesPerS float64
}

// EstimateFull extrapolates each run of the full plan from the run of the
// same kind (the same arm, or the same ID) in the quick plan, whose
// results are res; label names a kind. CPU time: a process's start-up (the
// cheapest eval or logits process of the quick run, which reads the whole
// data set but runs few images) plus, per training image, the quick
// run's threads divided by the training throughput its epochs.csv
// recorded (each thread busy while it trains), and a third of that per
// evaluated image; evaluation and logits processes run forward passes
// only, a third of a training image each. (The quick run's own CPU time
// per image counts its fixed costs, building the graph, the first steps,
// writing checkpoints and pictures, over a few hundred images: against
// the fine-tuning study's full runs it gave 0.9-2.1× their CPU time per
// image; threads over throughput gave 1.1-1.4× there, 1.0-1.15× for the
// distillation study's.) At the quick run's load: the same images at that
// throughput.
func EstimateFull(quick, full *Plan, res *Results, label func(Run) string) *Estimate {
	e := &Estimate{StartupS: math.Inf(1), Cores: runtime.NumCPU()}
	for _, rr := range res.Runs {
		for _, a := range rr.Post {
			e.StartupS = math.Min(e.StartupS, a.CPUS)
		}
	}
	if math.IsInf(e.StartupS, 1) {
		e.StartupS = 0
	}
	quickOf := map[string]string{}
	for _, r := range quick.Runs {
		if k := runKind(r); quickOf[k] == "" {
			quickOf[k] = r.ID
		}
	}
	rows := map[string]*EstimateRow{}
	var order []string
	for _, r := range full.Runs {
		k := runKind(r)
		row, ok := rows[k]
		if !ok {
			row = &EstimateRow{What: label(r), Epochs: r.Epochs, CPUPerImageMs: math.NaN(), QuickImagesPerS: math.NaN()}
			rows[k] = row
			order = append(order, k)
		}
		row.Runs++
		qr, ok := res.Runs[quickOf[k]]
		if !ok {
			row.CPUS, row.AtLoadS = math.NaN(), math.NaN()
			continue
		}
		ips := Median(Column(qr.Epochs, "images_per_s"))
		perImage := float64(trainThreads(qr.Done)) / ips
		images := float64(r.Epochs) * (float64(r.TrainImages) + float64(r.EvalImages)/3)
		// The evaluations and the test logits.
		post := float64(len(r.Evals)+1) * float64(r.EvalImages) / 3
		processes := float64(len(r.Evals) + 2)
		if r.TrainLogits {
			post += float64(r.TrainImages) / 3
			processes++
		}
		row.CPUPerImageMs = 1000 * perImage
		row.CPUS += processes*e.StartupS + perImage*(images+post)
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

// trainThreads is how many threads the last training process of a run
// had: its GOMAXPROCS, or every CPU.
func trainThreads(d Done) int {
	if n := len(d.Attempts); n > 0 && d.Attempts[n-1].Threads > 0 {
		return d.Attempts[n-1].Threads
	}
	return runtime.NumCPU()
}

// IdleS is the wall-clock time on this machine's cores, all free and
// busy: the CPU time divided by the cores (vit-train spreads each step
// over them), a lower bound.
func (e *Estimate) IdleS() float64 { return e.CPUS / float64(e.Cores) }

// runKind groups the runs of one configuration (the seeds of an arm).
func runKind(r Run) string {
	if r.Arm != "" {
		return "arm:" + r.Arm
	}
	return r.ID
}

// Summary is the estimate in one sentence.
func (e *Estimate) Summary() string {
	return fmt.Sprintf("the full study (default flags) needs about %s of CPU time: about %s on %d idle cores; at the throughput of this run (load average %s), %s",
		Hours(e.CPUS), Hours(e.IdleS()), e.Cores, OrDash(e.Load), Hours(e.AtLoadS))
}

// Markdown renders the estimate; defaults describes the full study's
// default budget.
func (e *Estimate) Markdown(defaults string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The full study at the default flags (%s), "+
		"extrapolated from this run's training throughput: CPU time per training image = the run's threads ÷ its images/s, a third of that per evaluated image, "+
		"and %.1f CPU seconds per vit-train process to start. "+
		"Quick runs are short and a shared machine makes them noisy: take these as the order of magnitude.\n\n", defaults, e.StartupS)
	b.WriteString("| runs | count | epochs each | CPU ms per training image | CPU time | wall-clock at this run's throughput |\n|---|---|---|---|---|---|\n")
	for _, r := range e.Rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s |\n", r.What, r.Runs, r.Epochs, fmt.Sprintf("%.1f", r.CPUPerImageMs), Hours(r.CPUS), Hours(r.AtLoadS))
	}
	fmt.Fprintf(&b, "| **total** | | | | **%s** | **%s** |\n\n", Hours(e.CPUS), Hours(e.AtLoadS))
	fmt.Fprintf(&b, "On %d idle cores that is about %s (CPU time ÷ cores); this run saw a load average of %s.\n", e.Cores, Hours(e.IdleS()), OrDash(e.Load))
	return b.String()
}
