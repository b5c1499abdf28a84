package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/fmapeak"
	"github.com/vit-train/vit-train/nn/runner"
	"github.com/vit-train/vit-train/train"
	"github.com/vit-train/vit-train/train/checkpoint"
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
	Peak       fmapeak.Result `json:"peak"`
	PeakRaised bool           `json:"peak_raised"`
	// TilesRefused says why a processor that lists AMX does not run the
	// tile products here (Linux refused the tile data, say); empty
	// otherwise.
	TilesRefused   string  `json:"tiles_refused,omitempty"`
	TrainPeakShare float64 `json:"train_peak_share"`
	InferPeakShare float64 `json:"infer_peak_share"`
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
	// With --data: the data set the steps trained on (data.dataset), what
	// the model took from it as training takes it (train.FitToData), the
	// loader's workers, and how long a timed step waited for its batches,
	// in milliseconds and as a share of the step.
	Data              string  `json:"data,omitempty"`
	DataFit           string  `json:"data_fit,omitempty"`
	DataWorkers       int     `json:"data_workers,omitempty"`
	DataWaitMsPerStep float64 `json:"data_wait_ms_per_step"`
	DataWaitShare     float64 `json:"data_wait_share"`
	// With --op-times: each op's time in as many more training steps and
	// inference batches, timed op by op, and how long those steps and
	// batches took.
	TrainOps *opTimes `json:"train_ops,omitempty"`
	InferOps *opTimes `json:"infer_ops,omitempty"`
}

// opTimes is where the time of a step (or an inference batch) goes, op by
// op: each op's wall time, those of one kind with one output shape
// together, the longest first, and the step's own time.
type opTimes struct {
	MsPerStep float64  `json:"ms_per_step"`
	Ops       []opTime `json:"ops"`
}

// opTime is the ops of one kind with one output shape: their calls and
// milliseconds a step.
type opTime struct {
	Op           string  `json:"op"`
	Shape        string  `json:"shape"`
	CallsPerStep float64 `json:"calls_per_step"`
	MsPerStep    float64 `json:"ms_per_step"`
}

// benchFlags are bench's flags. --config and --set take the trainer's
// settings; the others are shorthands for some of them.
type benchFlags struct {
	mf         modelFlags
	configPath string
	sets       []string
	batch      int
	steps      int
	ckpt       bool
	precision  string
	asJSON     bool
	data       bool
	profile    string
	memprof    string
	opTimes    bool
}

func newBenchCommand() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Time the training step `train` takes (forward, backward, reduction, clipping, the optimiser, EMA) and inference",
		Long: `Time the optimiser step vit-train train takes with the same settings, on
random images held in its inputs (no data loading, no teacher forward pass:
a distilled model trains against random teacher logits) or, with --data, on
the run's training data through its loader (data.*, aug.*), reporting how
long the steps waited for it, then inference
batches of the frozen evaluation graph. Settings are layered as train
layers them: built-in defaults (with the model and batch below), then
--config FILE, then the shorthand flags (--model, --batch, --precision,
--grad-checkpointing, --distilled, the model shape), then each --set
key=value.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.config(cmd)
			if err != nil {
				return err
			}
			if f.profile != "" {
				pf, err := os.Create(f.profile)
				if err != nil {
					return err
				}
				defer pf.Close()
				if err := pprof.StartCPUProfile(pf); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			cm, err := comm.FromEnv()
			if err != nil {
				return err
			}
			defer cm.Close()
			r, err := runBench(cfg, benchOptions{steps: f.steps, memProfile: f.memprof, withData: f.data, opTimes: f.opTimes}, cm)
			if err != nil {
				if cm.Size() > 1 {
					cm.Abort(1, fmt.Sprintf("vit-train bench: rank %d of %d: %v", cm.Rank(), cm.Size(), err))
				}
				return err
			}
			if cm.Rank() != 0 {
				return nil
			}
			if f.asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(r)
			}
			r.print(cmd.OutOrStdout())
			return nil
		},
	}
	f.mf.register(cmd, "vit_cifar_patch4_32")
	fl := cmd.Flags()
	fl.StringVar(&f.configPath, "config", "", "YAML configuration of a training run (see configs/)")
	fl.StringArrayVar(&f.sets, "set", nil, "override a training setting, key=value (repeatable)")
	fl.IntVar(&f.batch, "batch", 64, "data.batch_size")
	fl.IntVar(&f.steps, "steps", 10, "timed steps (after 2 warm-up steps)")
	fl.Lookup("distilled").Usage = "model.distilled=true and distill.type=hard: a distillation token and head, trained against random teacher logits"
	fl.BoolVar(&f.ckpt, "grad-checkpointing", false, "model.grad_checkpointing: recompute each block's activations in the backward pass")
	fl.StringVar(&f.precision, "precision", "fp32", "model.precision: fp32, or mixed for the fastest low-precision matrix product of this processor")
	fl.BoolVar(&f.asJSON, "json", false, "print JSON")
	fl.BoolVar(&f.data, "data", false, "train on the run's training data (data.dataset, data.root, aug.*) through its loader, and report how long the steps waited for it")
	fl.StringVar(&f.profile, "cpuprofile", "", "write a CPU profile (go tool pprof) to this file")
	fl.StringVar(&f.memprof, "memprofile", "", "write a profile of every heap allocation of the timed training steps (go tool pprof -sample_index=alloc_objects) to this file")
	fl.BoolVar(&f.opTimes, "op-times", false, "then time as many training steps and inference batches again op by op, and report where their time goes")
	return cmd
}

// config layers the training settings bench times: train's defaults with
// bench's model and batch, --config, the shorthand flags given, --set.
func (f *benchFlags) config(cmd *cobra.Command) (train.Config, error) {
	if f.steps < 1 {
		return train.Config{}, fmt.Errorf("bench: --steps must be positive, got %d", f.steps)
	}
	base := train.DefaultConfig()
	base.Model.Name, base.Data.BatchSize = f.mf.name, f.batch
	changed := cmd.Flags().Changed
	var short []string
	set := func(flag, key string, v any) {
		if changed(flag) {
			short = append(short, fmt.Sprintf("%s=%v", key, v))
		}
	}
	set("model", "model.name", f.mf.name)
	set("batch", "data.batch_size", f.batch)
	set("precision", "model.precision", f.precision)
	set("grad-checkpointing", "model.grad_checkpointing", f.ckpt)
	short = append(short, f.mf.sets(changed)...)
	if f.mf.o.Distilled {
		short = append(short, "distill.type=hard")
	}
	cfg, err := base.Layer(f.configPath, append(short, f.sets...))
	if err != nil {
		return train.Config{}, err
	}
	return cfg, checkBenchConfig(cfg)
}

// checkBenchConfig validates cfg as train would, except for the
// distillation teacher: bench feeds random teacher logits, so one named
// is an error.
func checkBenchConfig(cfg train.Config) error {
	d := cfg.Distill
	if d.Teacher != "" || d.TeacherLogits != "" {
		return fmt.Errorf("bench: distill.teacher / distill.teacher_logits: bench trains against random teacher logits and runs no teacher; leave them unset")
	}
	if d.Distilling() {
		cfg.Distill.TeacherLogits = "random" // what bench stands in for
	}
	return cfg.Validate()
}

// benchWarmup is the number of untimed steps before the timed ones.
const benchWarmup = 2

// benchOptions are what bench times besides the step cfg describes: the
// steps (and inference batches), a profile of the timed steps'
// allocations (memProfile, none when empty), the run's data through its
// loader rather than held random images (withData), and a second round
// of steps and batches timed op by op (opTimes).
type benchOptions struct {
	steps             int
	memProfile        string
	withData, opTimes bool
}

// runBench times o.steps of the optimiser step cfg describes and as many
// inference batches of data.batch_size images on each process of cm; with
// several, the steps that average the gradients after the backward pass
// are timed too (see benchResult).
func runBench(cfg train.Config, o benchOptions, cm comm.Communicator) (benchResult, error) {
	ds, spec, fit, err := benchModel(&cfg, o.withData)
	if err != nil {
		return benchResult{}, err
	}
	c := spec.Config
	products, err := cfg.Model.Products()
	if err != nil {
		return benchResult{}, err
	}
	net, err := train.NewNetwork(spec, cfg.Seed, cfg.Model)
	if err != nil {
		return benchResult{}, err
	}
	// The schedule's first epoch holds every step bench takes: the
	// warm-up, the steps that average after the backward pass (several
	// processes), the timed ones and those timed op by op (the learning
	// rate does not change a step's time).
	s, err := train.NewStepper(cfg, net, cm, benchWarmup+3*o.steps)
	if err != nil {
		return benchResult{}, err
	}
	batch := cfg.Data.BatchSize
	r := benchResult{Model: c.ModelName(), Backend: blas.Backend(), Precision: cfg.Model.Precision, Products: products.Describe(), Threads: runtime.GOMAXPROCS(0), Batch: batch, Steps: o.steps,
		Params: c.ParamCount(), Ranks: cm.Size(), GradBytes: s.GradBytes(), GradCheckpointing: cfg.Model.GradCheckpointing, ActivationBytes: s.BufferBytes()}
	fillRandom(s.Inputs(), batch, rand.New(rand.NewPCG(1, 2)))
	var src train.MicroBatches = &heldBatch{images: batch}
	var data *train.BatchSource
	if o.withData {
		if data, err = openBenchData(cfg, ds, spec, cm); err != nil {
			return benchResult{}, err
		}
		defer data.Close()
		src, r.Data, r.DataFit, r.DataWorkers = data, cfg.Data.Dataset, fit, cfg.Data.Workers
	}
	// One run of steps, from the warm-up to the steps timed op by op.
	step := stepper(s, src)
	if err := r.timeTraining(s, step, data, o.memProfile); err != nil {
		return benchResult{}, err
	}
	if o.opTimes {
		if r.TrainOps, err = timeOps(s, o.steps, step); err != nil {
			return benchResult{}, err
		}
	}
	eval, err := net.Graph(batch, false, nil)
	if err != nil {
		return benchResult{}, err
	}
	copy(eval.ImageData.([]float32), s.Inputs().Images)
	trainFLOPs := s.FLOPs()
	// Inference runs as eval and predict run it, with no training state:
	// the step's buffers and the optimiser's state go back to the system
	// before the frozen weights' copy is made, rather than add to the peak.
	s = nil
	debug.FreeOSMemory()
	if err := eval.FreezeWeights(); err != nil {
		return benchResult{}, err
	}
	if err := eval.Run(); err != nil {
		return benchResult{}, err
	}
	inferTime, inferMs, err := timeSteps(o.steps, eval.Run)
	if err != nil {
		return benchResult{}, err
	}
	if o.opTimes {
		if r.InferOps, err = timeOps(eval, o.steps, eval.Run); err != nil {
			return benchResult{}, err
		}
	}
	images := float64(batch * r.Ranks)
	// The arithmetic each graph runs: a training step's products are
	// counted as three times its forward pass's.
	trainFwd, inferFwd := float64(trainFLOPs)*images, float64(eval.FLOPs)*images
	r.TrainImagesPerS, r.TrainGFLOPs = images/(r.TrainMsPerStep/1e3), 3*trainFwd/(r.TrainMsPerStep/1e3)/1e9
	r.InferMsPerBatch, r.InferImagesPerS, r.InferGFLOPs, r.InferBatchMs = inferTime*1e3, images/inferTime, inferFwd/inferTime/1e9, inferMs
	if err := fmapeak.TilesUsable(); err != nil && !errors.Is(err, fmapeak.ErrNoTiles) {
		r.TilesRefused = err.Error()
	}
	r.PeakRSSBytes = peakRSS()
	r.measurePeak(peakKind(products))
	return r, nil
}

// benchModel returns the model bench times: with the run's data (--data),
// fitted to it as training fits it (train.FitToData, whose note is fit),
// with that data opened; without, the configuration's model, which must
// then name its input size and classes.
func benchModel(cfg *train.Config, withData bool) (ds *train.Datasets, spec model.Spec, fit string, err error) {
	if !withData {
		if spec, err = cfg.ModelSpec(); err != nil {
			return nil, spec, "", err
		}
		spec, err = withInput("bench", spec)
		return nil, spec, "", err
	}
	if ds, err = train.OpenDatasets(cfg.Data); err != nil {
		return nil, spec, "", err
	}
	spec, fit, err = train.FitToData(cfg, ds)
	return ds, spec, fit, err
}

// openBenchData opens the training micro-batches a run of cfg takes on
// rank cm.Rank() from ds, for a model of spec, which must take the data;
// they run on from epoch to epoch. The teacher's logits are left as
// fillRandom wrote them.
func openBenchData(cfg train.Config, ds *train.Datasets, spec model.Spec, cm comm.Communicator) (*train.BatchSource, error) {
	if err := ds.CheckModel(spec); err != nil {
		return nil, err
	}
	src, err := train.NewBatchSource(cfg, ds, spec, nil, cm)
	if err != nil {
		return nil, err
	}
	src.Repeat = true
	return src, nil
}

// fillRandom writes random images, one-hot targets of random classes and,
// when distilling, random teacher logits into in.
func fillRandom(in train.Inputs, batch int, rng *rand.Rand) {
	for i := range in.Images {
		in.Images[i] = float32(rng.NormFloat64())
	}
	clear(in.Targets)
	for b := 0; b < batch; b++ {
		in.Targets[b*in.Classes+rng.IntN(in.Classes)] = 1
	}
	for i := range in.Teacher {
		in.Teacher[i] = float32(rng.NormFloat64())
	}
}

// heldBatch is a micro-batch left in the step's inputs: every micro-batch
// of bench's steps is the one fillRandom wrote.
type heldBatch struct{ images int }

func (h *heldBatch) Fill(train.Inputs) (int, error) { return h.images, nil }

// print writes r as text.
func (r benchResult) print(w io.Writer) {
	fmt.Fprintf(w, "model %s, %d params, batch %d, BLAS %s, %d threads, precision %s (products %s)\n", r.Model, r.Params, r.Batch, r.Backend, r.Threads, r.Precision, r.Products)
	fmt.Fprintf(w, "processor %s\n", r.Processor)
	if r.TilesRefused != "" {
		fmt.Fprintf(w, "AMX tiles not used, though the processor lists them: %s\n", r.TilesRefused)
	}
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
	if r.DataFit != "" {
		fmt.Fprintf(w, "note: %s\n", r.DataFit)
	}
	if r.Data != "" {
		fmt.Fprintf(w, "data   %s through the loader (%d workers): the step waited %.1f ms for it (%.1f%% of the step)\n", r.Data, r.DataWorkers, r.DataWaitMsPerStep, 100*r.DataWaitShare)
	}
	fmt.Fprintf(w, "infer  %9.1f ms/batch %8.2f images/s  %7.1f GFLOP/s%s\n", r.InferMsPerBatch, r.InferImagesPerS, r.InferGFLOPs, peakShare(r.InferPeakShare, r.Peak.Kind))
	fmt.Fprintf(w, "memory peak RSS %s (activation and gradient buffers %s); per training step %.0f allocations, %s; heap growth over the timed steps %s\n",
		bytesString(r.PeakRSSBytes), bytesString(r.ActivationBytes), r.AllocsPerStep, bytesString(int64(r.AllocBytesPerStep)), bytesString(r.HeapGrowthBytes))
	if r.TrainOps != nil {
		r.TrainOps.print(w, "a training step")
	}
	if r.InferOps != nil {
		r.InferOps.print(w, "an inference batch")
	}
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
// shares of it (fmapeak.PeakAbove: never above 1). GFLOP/s are the whole
// job's; the peak is one process's.
func (r *benchResult) measurePeak(kind fmapeak.Kind) {
	r.Processor, _ = fmapeak.ReadProcessor() // unknown off Linux
	r.Peak, r.PeakRaised = fmapeak.PeakAbove(kind, r.Threads, max(r.TrainGFLOPs, r.InferGFLOPs)/float64(r.Ranks))
	if r.Peak.GFLOPs <= 0 {
		return
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

// timeTraining warms up, then times r.Steps optimiser steps of s, each a
// call of step (in a job of several processes, after as many that
// average the gradients after the backward pass) and the memory they
// allocate. With a memProfile path, every allocation of the timed steps
// is recorded there.
func (r *benchResult) timeTraining(s *train.Stepper, step func() error, data *train.BatchSource, memProfile string) error {
	// Collect the setup's garbage before the warm-up steps: a collection
	// empties sync.Pool, whose caches the steps after it refill, so the
	// timed steps would otherwise count those allocations.
	runtime.GC()
	s.AverageAfterBackward(r.Ranks > 1)
	for range benchWarmup {
		if err := step(); err != nil {
			return err
		}
	}
	if r.Ranks > 1 {
		s.CommTime() // the warm-up's allreduces are not timed
		plain, _, err := timeSteps(r.Steps, step)
		if err != nil {
			return err
		}
		after, _ := s.CommTime()
		r.NoOverlapMsPerStep = plain * 1e3
		r.AllreduceMsPerStep = after.Seconds() * 1e3 / float64(r.Steps)
		r.AllreduceShare = r.AllreduceMsPerStep / r.NoOverlapMsPerStep
		s.AverageAfterBackward(false)
	}
	var before, after, settled runtime.MemStats
	var waited time.Duration
	if data != nil {
		waited = data.Waited()
	}
	runtime.ReadMemStats(&before)
	stopProfile := startAllocProfile(memProfile)
	t, ms, err := timeSteps(r.Steps, step)
	if err != nil {
		return err
	}
	if data != nil {
		r.DataWaitMsPerStep = float64((data.Waited() - waited).Nanoseconds()) / 1e6 / float64(r.Steps)
		r.DataWaitShare = r.DataWaitMsPerStep / (t * 1e3)
	}
	runtime.ReadMemStats(&after)
	if err := stopProfile(); err != nil {
		return err
	}
	runtime.GC()
	runtime.ReadMemStats(&settled)
	_, wait := s.CommTime()
	r.TrainMsPerStep, r.TrainStepMs = t*1e3, ms
	r.ExposedAllreduceMsPerStep = wait.Seconds() * 1e3 / float64(r.Steps)
	r.AllocsPerStep = float64(after.Mallocs-before.Mallocs) / float64(r.Steps)
	r.AllocBytesPerStep = float64(after.TotalAlloc-before.TotalAlloc) / float64(r.Steps)
	r.HeapGrowthBytes = int64(settled.HeapAlloc) - int64(before.HeapAlloc)
	return nil
}

// stepper returns a function that runs s's next optimiser step on src.
func stepper(s *train.Stepper, src train.MicroBatches) func() error {
	var pos checkpoint.State
	return func() error {
		_, err := s.Step(&pos, src)
		return err
	}
}

// opTimer is a graph whose runs can time each of their ops: a training
// step's (train.Stepper) or an inference graph's (nn.Graph).
type opTimer interface {
	TimeOps() (*runner.OpTimes, error)
	StopTiming()
}

// timeOps runs step n times with t timing its ops, and returns where a
// step's time went.
func timeOps(t opTimer, n int, step func() error) (*opTimes, error) {
	times, err := t.TimeOps()
	if err != nil {
		return nil, err
	}
	defer t.StopTiming()
	perStep, _, err := timeSteps(n, step)
	if err != nil {
		return nil, err
	}
	r := &opTimes{MsPerStep: perStep * 1e3}
	for _, o := range times.ByOp() {
		r.Ops = append(r.Ops, opTime{Op: o.Op, Shape: o.Shape, CallsPerStep: float64(o.Calls) / float64(n), MsPerStep: o.Spent.Seconds() * 1e3 / float64(n)})
	}
	return r, nil
}

// print writes where a step's time went, under title.
func (t *opTimes) print(w io.Writer, title string) {
	var ops float64
	for _, o := range t.Ops {
		ops += o.MsPerStep
	}
	fmt.Fprintf(w, "%s, timed op by op: %.1f ms, %.1f ms of it in the graph's ops (ms, share of the ops' time, calls):\n", title, t.MsPerStep, ops)
	for _, o := range t.Ops {
		fmt.Fprintf(w, "  %9.2f  %5.1f%%  %4g  %s %s\n", o.MsPerStep, 100*o.MsPerStep/ops, o.CallsPerStep, o.Op, o.Shape)
	}
}

// timeSteps runs step n times and returns the mean seconds per step and
// each step's milliseconds.
func timeSteps(n int, step func() error) (float64, []float64, error) {
	ms := make([]float64, n)
	start := time.Now()
	for i := range ms {
		t := time.Now()
		if err := step(); err != nil {
			return 0, nil, err
		}
		ms[i] = msSince(t)
	}
	return time.Since(start).Seconds() / float64(n), ms, nil
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

// msSince returns the milliseconds elapsed since t.
func msSince(t time.Time) float64 { return float64(time.Since(t).Nanoseconds()) / 1e6 }

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
