package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vit-train/vit-train/comm"
	"github.com/vit-train/vit-train/distill"
	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/fmapeak"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/train"
)

// benchResult is what `vit-train bench` reports.
type benchResult struct {
	Model   string `json:"model"`
	Backend string `json:"blas"`
	// Precision is model.precision (fp32 or mixed), Products the
	// arithmetic of the matrix products it gives (blas.Variant).
	Precision         string    `json:"precision"`
	Products          string    `json:"products"`
	Threads           int       `json:"threads"`
	Batch             int       `json:"batch"`
	Steps             int       `json:"steps"`
	Params            int       `json:"params"`
	TrainMsPerStep    float64   `json:"train_ms_per_step"`
	TrainImagesPerS   float64   `json:"train_images_per_s"`
	TrainGFLOPs       float64   `json:"train_gflop_per_s"`
	InferMsPerBatch   float64   `json:"infer_ms_per_batch"`
	InferImagesPerS   float64   `json:"infer_images_per_s"`
	InferGFLOPs       float64   `json:"infer_gflop_per_s"`
	TrainStepMs       []float64 `json:"train_step_ms"`
	InferBatchMs      []float64 `json:"infer_batch_ms"`
	AllocsPerStep     float64   `json:"allocs_per_step"`
	AllocBytesPerStep float64   `json:"alloc_bytes_per_step"`
	HeapGrowthBytes   int64     `json:"heap_growth_bytes"`
	PeakRSSBytes      int64     `json:"peak_rss_bytes"`
	ActivationBytes   int64     `json:"activation_bytes"`
	GradCheckpointing bool      `json:"grad_checkpointing"`
	// Processor is the CPU the figures were measured on.
	Processor fmapeak.Processor `json:"processor"`
	// Peak is this process's measured multiply-add peak on its threads,
	// of the arithmetic its matrix products ran (GFLOPs 0 where it cannot
	// be measured); the PeakShares are TrainGFLOPs and InferGFLOPs over
	// it, 0 without it, and never above 1 (see measurePeak). PeakRaised
	// says a rate exceeded the peak measured twice, and the peak is that
	// rate.
	Peak           fmapeak.Result `json:"peak"`
	PeakRaised     bool           `json:"peak_raised"`
	TrainPeakShare float64        `json:"train_peak_share"`
	InferPeakShare float64        `json:"infer_peak_share"`
	// Under mpirun: the job's processes and the gradient bytes each
	// contributes. Images/s and GFLOP/s are then the whole job's, with
	// TrainMsPerStep the step training takes: the gradients averaged
	// bucket by bucket during the backward pass, waiting
	// ExposedAllreduceMsPerStep after it. NoOverlapMsPerStep is a step
	// that averages them after the backward pass, AllreduceMsPerStep of
	// it in the allreduce (AllreduceShare of the step).
	Ranks                     int     `json:"ranks"`
	GradBytes                 int64   `json:"grad_bytes"`
	NoOverlapMsPerStep        float64 `json:"no_overlap_ms_per_step"`
	AllreduceMsPerStep        float64 `json:"allreduce_ms_per_step"`
	AllreduceShare            float64 `json:"allreduce_share"`
	ExposedAllreduceMsPerStep float64 `json:"exposed_allreduce_ms_per_step"`
}

func newBenchCommand() *cobra.Command {
	var (
		mf        modelFlags
		batch     int
		steps     int
		distilled bool
		ckpt      bool
		asJSON    bool
		profile   string
		memprof   string
		precision string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Time training steps (forward, backward, AdamW) and inference",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := mf.config()
			if err != nil {
				return err
			}
			if distilled {
				c.Distilled = true
			}
			if profile != "" {
				f, err := os.Create(profile)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			cm, err := comm.FromEnv()
			if err != nil {
				return err
			}
			defer cm.Close()
			r, err := runBench(c, batch, steps, ckpt, precision, memprof, cm)
			if err != nil {
				if cm.Size() > 1 {
					cm.Abort(1, fmt.Sprintf("vit-train bench: rank %d of %d: %v", cm.Rank(), cm.Size(), err))
				}
				return err
			}
			if cm.Rank() != 0 {
				return nil
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(r)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "model %s, %d params, batch %d, BLAS %s, %d threads, precision %s (products %s)\n", r.Model, r.Params, r.Batch, r.Backend, r.Threads, r.Precision, r.Products)
			fmt.Fprintf(w, "processor %s\n", r.Processor)
			if r.Peak.GFLOPs > 0 {
				raised := ""
				if r.PeakRaised {
					raised = "; raised to a rate achieved above it"
				}
				fmt.Fprintf(w, "%s peak %.1f GFLOP/s, measured (%s, %d threads%s)\n", r.Peak.Kind, r.Peak.GFLOPs, r.Peak.ISA, r.Peak.Threads, raised)
			}
			fmt.Fprintf(w, "train  %9.1f ms/step  %8.2f images/s  %7.1f GFLOP/s%s\n", r.TrainMsPerStep, r.TrainImagesPerS, r.TrainGFLOPs, peakShare(r.TrainPeakShare, r.Peak.Kind))
			if r.Ranks > 1 {
				fmt.Fprintf(w, "       %d processes × batch %d, %s of gradients per process; averaged after the backward pass: %.1f ms/step, %.1f ms (%.1f%%) of it in the allreduce; overlapped: %.1f ms left to wait\n",
					r.Ranks, r.Batch, bytesString(r.GradBytes), r.NoOverlapMsPerStep, r.AllreduceMsPerStep, 100*r.AllreduceShare, r.ExposedAllreduceMsPerStep)
			}
			fmt.Fprintf(w, "infer  %9.1f ms/batch %8.2f images/s  %7.1f GFLOP/s%s\n", r.InferMsPerBatch, r.InferImagesPerS, r.InferGFLOPs, peakShare(r.InferPeakShare, r.Peak.Kind))
			fmt.Fprintf(w, "memory peak RSS %s (activation and gradient buffers %s); per training step %.0f allocations, %s; heap growth over the timed steps %s\n",
				bytesString(r.PeakRSSBytes), bytesString(r.ActivationBytes), r.AllocsPerStep, bytesString(int64(r.AllocBytesPerStep)), bytesString(r.HeapGrowthBytes))
			return nil
		},
	}
	mf.register(cmd, "vit_cifar_patch4_32")
	cmd.Flags().IntVar(&batch, "batch", 64, "batch size")
	cmd.Flags().IntVar(&steps, "steps", 10, "timed steps (after 2 warm-up steps)")
	cmd.Flags().BoolVar(&distilled, "distilled", false, "add a distillation token and head (hard distillation loss)")
	cmd.Flags().BoolVar(&ckpt, "grad-checkpointing", false, "recompute each block's activations in the backward pass")
	cmd.Flags().StringVar(&precision, "precision", "fp32", "model.precision: fp32, or mixed for the fastest low-precision matrix product of this processor")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&profile, "cpuprofile", "", "write a CPU profile (go tool pprof) to this file")
	cmd.Flags().StringVar(&memprof, "memprofile", "", "write a profile of every heap allocation of the timed training steps (go tool pprof -sample_index=alloc_objects) to this file")
	return cmd
}

// runBench times steps training steps and inference batches of batch
// images on each process of cm; with several, the gradients are averaged
// across them by a bucketed allreduce during the backward pass, and steps
// that average them after it are timed too (see benchResult).
func runBench(c vit.Config, batch, steps int, gradCheckpointing bool, precision, memProfile string, cm comm.Communicator) (benchResult, error) {
	if batch < 1 || steps < 1 {
		return benchResult{}, fmt.Errorf("bench: --batch and --steps must be positive, got %d and %d", batch, steps)
	}
	products, err := train.ModelConfig{Precision: precision}.Products()
	if err != nil {
		return benchResult{}, fmt.Errorf("bench: --precision: %w", err)
	}
	m, err := vit.New(c, 1)
	if err != nil {
		return benchResult{}, err
	}
	m.Products = products
	step, fill, err := benchStep(m, batch, gradCheckpointing, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		return benchResult{}, err
	}
	bt, err := newBenchTrainer(step, vit.AsNetwork(m).Params(), cm)
	if err != nil {
		return benchResult{}, err
	}
	r := benchResult{Model: c.Name, Backend: blas.Backend(), Precision: precision, Products: products.Describe(), Threads: runtime.GOMAXPROCS(0), Batch: batch, Steps: steps,
		Params: c.ParamCount(), Ranks: cm.Size(), GradBytes: bt.gradBytes(), GradCheckpointing: gradCheckpointing, ActivationBytes: step.BufferBytes()}
	fill()
	if err := r.timeTraining(bt, memProfile); err != nil {
		return benchResult{}, err
	}
	eval, err := m.BuildGraph(batch, false, nil)
	if err != nil {
		return benchResult{}, err
	}
	copyImages(eval, step.Graph)
	// Inference runs as eval and predict run it, with no training state:
	// the step's buffers and AdamW's moments go back to the system before
	// the frozen weights' copy is made, rather than add to the peak.
	step, bt, fill = nil, nil, nil
	debug.FreeOSMemory()
	if err := eval.FreezeWeights(); err != nil {
		return benchResult{}, err
	}
	if err := eval.Run(); err != nil {
		return benchResult{}, err
	}
	inferTime, inferMs, err := timeSteps(steps, eval.Run)
	if err != nil {
		return benchResult{}, err
	}
	images := float64(batch * r.Ranks)
	fwd := float64(c.ForwardFLOPs()) * images
	r.TrainImagesPerS, r.TrainGFLOPs = images/(r.TrainMsPerStep/1e3), 3*fwd/(r.TrainMsPerStep/1e3)/1e9
	r.InferMsPerBatch, r.InferImagesPerS, r.InferGFLOPs, r.InferBatchMs = inferTime*1e3, images/inferTime, fwd/inferTime/1e9, inferMs
	r.PeakRSSBytes = peakRSS()
	r.measurePeak(peakKind(products))
	return r, nil
}

// peakKind is the arithmetic whose peak products of v are measured
// against.
func peakKind(v blas.Variant) fmapeak.Kind {
	if v.IsFP32() {
		return fmapeak.FP32
	}
	return fmapeak.Kind(v)
}

// measurePeak measures the peak of kind on r's threads and sets the
// shares of it. GFLOP/s are the whole job's; the peak is one process's.
// A rate above the peak is an error of the peak's measurement (other work
// on a core while it ran): the peak is measured again, for longer, and
// the higher kept; a rate still above it then becomes the peak, since the
// processor has shown it can go that fast.
func (r *benchResult) measurePeak(kind fmapeak.Kind) {
	r.Processor, _ = fmapeak.ReadProcessor() // unknown off Linux
	r.Peak = fmapeak.Measure(kind, r.Threads, 500*time.Millisecond)
	if r.Peak.GFLOPs <= 0 {
		return
	}
	rate := max(r.TrainGFLOPs, r.InferGFLOPs) / float64(r.Ranks)
	if rate > r.Peak.GFLOPs {
		again := fmapeak.Measure(kind, r.Threads, 2*time.Second)
		r.Peak.GFLOPs = max(r.Peak.GFLOPs, again.GFLOPs)
	}
	if rate > r.Peak.GFLOPs {
		r.Peak.GFLOPs, r.PeakRaised = rate, true
	}
	r.TrainPeakShare = r.TrainGFLOPs / float64(r.Ranks) / r.Peak.GFLOPs
	r.InferPeakShare = r.InferGFLOPs / float64(r.Ranks) / r.Peak.GFLOPs
}

// peakShare formats a share of the peak, or nothing without one.
func peakShare(share float64, kind fmapeak.Kind) string {
	if share <= 0 {
		return ""
	}
	return fmt.Sprintf("  %4.1f%% of the %s peak", 100*share, kind)
}

// timeTraining warms up, then times r.Steps training steps (overlapped in
// a job of several processes, after as many steps that average the
// gradients after the backward pass) and the memory they allocate. With a
// memProfile path, every allocation of the timed steps is recorded there.
func (r *benchResult) timeTraining(bt *benchTrainer, memProfile string) error {
	// Collect the setup's garbage before the warm-up steps: a collection
	// empties sync.Pool, whose caches the steps after it refill, so the
	// timed steps would otherwise count those allocations.
	runtime.GC()
	for i := 0; i < 2; i++ {
		if err := bt.plain(); err != nil {
			return err
		}
	}
	train := bt.plain
	if r.Ranks > 1 {
		bt.allreduce = 0 // the warm-up's allreduces are not timed
		plain, _, err := timeSteps(r.Steps, bt.plain)
		if err != nil {
			return err
		}
		r.NoOverlapMsPerStep = plain * 1e3
		r.AllreduceMsPerStep = bt.allreduce.Seconds() * 1e3 / float64(r.Steps)
		r.AllreduceShare = r.AllreduceMsPerStep / r.NoOverlapMsPerStep
		train = bt.overlapped
	}
	var before, after, settled runtime.MemStats
	runtime.ReadMemStats(&before)
	stopProfile := startAllocProfile(memProfile)
	t, ms, err := timeSteps(r.Steps, train)
	if err != nil {
		return err
	}
	runtime.ReadMemStats(&after)
	if err := stopProfile(); err != nil {
		return err
	}
	runtime.GC()
	runtime.ReadMemStats(&settled)
	r.TrainMsPerStep, r.TrainStepMs = t*1e3, ms
	r.ExposedAllreduceMsPerStep = bt.wait.Seconds() * 1e3 / float64(r.Steps)
	r.AllocsPerStep = float64(after.Mallocs-before.Mallocs) / float64(r.Steps)
	r.AllocBytesPerStep = float64(after.TotalAlloc-before.TotalAlloc) / float64(r.Steps)
	r.HeapGrowthBytes = int64(settled.HeapAlloc) - int64(before.HeapAlloc)
	return nil
}

// startAllocProfile records every heap allocation from now until the
// returned function writes them to path (nothing when path is empty).
// Allocations before the call are sampled at the default rate, so the
// profile is that of the code between the two calls.
func startAllocProfile(path string) func() error {
	if path == "" {
		return func() error { return nil }
	}
	rate := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	return func() error {
		// The profile is written at the rate its samples were taken at, so
		// that pprof scales each by one; it counts allocations up to the
		// last collection.
		defer func() { runtime.MemProfileRate = rate }()
		runtime.GC()
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
}

// benchStep builds the training step a run would use, on random images and
// labels: soft-target cross-entropy on the class head, plus hard
// distillation against random teacher logits for a distilled model.
func benchStep(m *vit.ViT, batch int, gradCheckpointing bool, rng *rand.Rand) (*nn.Step, func(), error) {
	c := m.Config
	g, err := m.BuildGraph(batch, true, ops.NewRandomness(1))
	if err != nil {
		return nil, nil, err
	}
	g.GradCheckpointing = gradCheckpointing
	d := distill.DefaultConfig()
	if c.Distilled {
		d.Type = "hard"
	}
	obj, err := distill.NewObjective(g, d)
	if err != nil {
		return nil, nil, err
	}
	step, targets, teacher := obj.Step, obj.Targets, obj.Teacher
	fill := func() {
		for i, img := 0, g.ImageData.([]float32); i < len(img); i++ {
			img[i] = float32(rng.NormFloat64())
		}
		clear(targets)
		for b := 0; b < batch; b++ {
			targets[b*c.NumClasses+rng.IntN(c.NumClasses)] = 1
		}
		for i := range teacher {
			teacher[i] = float32(rng.NormFloat64())
		}
	}
	return step, fill, nil
}

// msSince returns the milliseconds elapsed since t.
func msSince(t time.Time) float64 { return float64(time.Since(t).Nanoseconds()) / 1e6 }

func copyImages(dst, src *nn.Graph) {
	copy(dst.ImageData.([]float32), src.ImageData.([]float32))
}

// peakRSS reads the process's peak resident set size (VmHWM) on Linux; 0 elsewhere.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
