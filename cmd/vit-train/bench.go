package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vit-train/vit-train/comm"
	"github.com/vit-train/vit-train/distill"
	"github.com/vit-train/vit-train/models"
	"github.com/vit-train/vit-train/models/vit"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/optim"
)

// benchResult is what `vit-train bench` reports.
type benchResult struct {
	Model             string    `json:"model"`
	Backend           string    `json:"blas"`
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
	// Under mpirun: the job's processes, and per step the time spent in the
	// gradient allreduce (included in TrainMsPerStep, its share in
	// AllreduceShare) and the gradient bytes each process contributes.
	// Images/s and GFLOP/s are then the whole job's.
	Ranks              int     `json:"ranks"`
	AllreduceMsPerStep float64 `json:"allreduce_ms_per_step"`
	AllreduceShare     float64 `json:"allreduce_share"`
	GradBytes          int64   `json:"grad_bytes"`
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
			r, err := runBench(c, batch, steps, ckpt, cm)
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
			fmt.Fprintf(w, "model %s, %d params, batch %d, BLAS %s, %d threads\n", r.Model, r.Params, r.Batch, r.Backend, r.Threads)
			fmt.Fprintf(w, "train  %9.1f ms/step  %8.2f images/s  %7.1f GFLOP/s\n", r.TrainMsPerStep, r.TrainImagesPerS, r.TrainGFLOPs)
			if r.Ranks > 1 {
				fmt.Fprintf(w, "       %d processes × batch %d; gradient allreduce %.1f ms/step (%.1f%% of the step), %s of gradients per process\n",
					r.Ranks, r.Batch, r.AllreduceMsPerStep, 100*r.AllreduceShare, bytesString(r.GradBytes))
			}
			fmt.Fprintf(w, "infer  %9.1f ms/batch %8.2f images/s  %7.1f GFLOP/s\n", r.InferMsPerBatch, r.InferImagesPerS, r.InferGFLOPs)
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
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&profile, "cpuprofile", "", "write a CPU profile (go tool pprof) to this file")
	return cmd
}

// runBench times steps training steps and inference batches of batch
// images on each process of cm; with several, the gradients are averaged
// across them by a bucketed allreduce, timed on its own.
func runBench(c vit.Config, batch, steps int, gradCheckpointing bool, cm comm.Communicator) (benchResult, error) {
	if batch < 1 || steps < 1 {
		return benchResult{}, fmt.Errorf("bench: --batch and --steps must be positive, got %d and %d", batch, steps)
	}
	m, err := vit.New(c, 1)
	if err != nil {
		return benchResult{}, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	step, fill, err := benchStep(m, batch, gradCheckpointing, rng)
	if err != nil {
		return benchResult{}, err
	}
	params := models.FromViT(m).Params()
	opt, err := optim.NewAdamW(params, optim.WeightDecayGroups(params, 0.05, nil), optim.DefaultAdamWConfig())
	if err != nil {
		return benchResult{}, err
	}
	grads := make([][]float32, len(params))
	sizes := make([]int, len(params))
	var gradBytes int64
	for i, p := range params {
		sizes[i] = len(p.Data)
		gradBytes += 4 * int64(len(p.Data))
	}
	reducer, err := comm.NewReducer(cm, sizes, 0)
	if err != nil {
		return benchResult{}, err
	}
	var allreduce time.Duration
	train := func() error {
		if err := step.Run(); err != nil {
			return err
		}
		for i := range grads {
			var err error
			if grads[i], err = step.Grad(i); err != nil {
				return err
			}
		}
		t := time.Now()
		if err := reducer.AllreduceMean(grads); err != nil {
			return err
		}
		allreduce += time.Since(t)
		return opt.Step(1e-4, grads)
	}
	fill()
	for i := 0; i < 2; i++ {
		if err := train(); err != nil {
			return benchResult{}, err
		}
	}
	trainMs := make([]float64, steps)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	allreduce = 0
	start := time.Now()
	for i := range trainMs {
		t := time.Now()
		if err := train(); err != nil {
			return benchResult{}, err
		}
		trainMs[i] = msSince(t)
	}
	trainTime := time.Since(start).Seconds() / float64(steps)
	runtime.ReadMemStats(&after)
	runtime.GC()
	var settled runtime.MemStats
	runtime.ReadMemStats(&settled)

	eval, err := m.BuildGraph(batch, false, nil)
	if err != nil {
		return benchResult{}, err
	}
	copyImages(eval, step.Graph)
	if err := eval.Run(); err != nil {
		return benchResult{}, err
	}
	inferMs := make([]float64, steps)
	start = time.Now()
	for i := range inferMs {
		t := time.Now()
		if err := eval.Run(); err != nil {
			return benchResult{}, err
		}
		inferMs[i] = msSince(t)
	}
	inferTime := time.Since(start).Seconds() / float64(steps)

	ranks := cm.Size()
	fwd := float64(c.ForwardFLOPs()) * float64(batch*ranks)
	arMs := allreduce.Seconds() * 1e3 / float64(steps)
	return benchResult{
		Model: c.Name, Backend: blas.Backend(), Threads: runtime.GOMAXPROCS(0), Batch: batch, Steps: steps, Params: c.ParamCount(),
		TrainMsPerStep: trainTime * 1e3, TrainImagesPerS: float64(batch*ranks) / trainTime, TrainGFLOPs: 3 * fwd / trainTime / 1e9,
		InferMsPerBatch: inferTime * 1e3, InferImagesPerS: float64(batch*ranks) / inferTime, InferGFLOPs: fwd / inferTime / 1e9,
		Ranks: ranks, AllreduceMsPerStep: arMs, AllreduceShare: arMs / (trainTime * 1e3), GradBytes: gradBytes,
		TrainStepMs: trainMs, InferBatchMs: inferMs,
		AllocsPerStep:     float64(after.Mallocs-before.Mallocs) / float64(steps),
		AllocBytesPerStep: float64(after.TotalAlloc-before.TotalAlloc) / float64(steps),
		HeapGrowthBytes:   int64(settled.HeapAlloc) - int64(before.HeapAlloc),
		PeakRSSBytes:      peakRSS(),
		ActivationBytes:   step.BufferBytes(),
		GradCheckpointing: gradCheckpointing,
	}, nil
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
