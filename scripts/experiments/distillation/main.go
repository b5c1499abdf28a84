// Command distillation runs DeiT's distillation ablations on the full
// Fashion-MNIST (Debian's dataset-fashion-mnist) with the vit-train binary,
// several seeds per arm, and writes docs/experiments/distillation.md with
// its figures.
//
//	go run ./scripts/experiments/distillation           # the full study (hours)
//	go run ./scripts/experiments/distillation --quick   # every arm on a few hundred images, in a temporary folder
//
// It builds vit-train itself (the default build, whose Go assembly
// kernels train fastest; --blas openblas for the OpenBLAS one), trains the
// teachers (a ResNet-20, a ViT, a second ResNet-20 stopped early at the
// ViT's accuracy, and a ResNet-20 at 56 px for the fine-tuning arm), then
// for each seed the student arms: no distillation (the plain ViT and the
// distilled architecture without a teacher), soft distillation (DeiT's τ 3,
// α 0.1 and τ 1, α 0.5), hard distillation from the CNN, from the ViT, from
// the CNN of the ViT's accuracy and from the CNN's logits read from a .npy
// file, and hard distillation while fine-tuning at 56 px. Two more runs check that teacher logits from a file
// train the same student as the live teacher.
//
// Each run has its own folder under --work. The command can be stopped
// (Ctrl-C: the running vit-train saves a checkpoint) and run again with the
// same flags: finished runs are skipped and an unfinished one continues
// with vit-train train --resume. --report-only writes the report from the
// runs finished so far.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// options are the command's settings.
type options struct {
	quick      bool
	reportOnly bool
	rebuild    bool

	seeds            int
	epochs           int // student epochs at 28 px
	teacherEpochs    int // the CNN teacher's epochs
	vitTeacherEpochs int
	// matchedTeacherEpochs are the epochs of the second ResNet-20, stopped
	// early so that its top-1 is close to the ViT teacher's.
	matchedTeacherEpochs int
	teacher56Epochs      int
	finetuneEpochs       int
	checkEpochs          int
	trainSubset          int // first N training images, 0 for all
	evalSubset           int // first N test images, 0 for all

	data string // Fashion-MNIST IDX folder
	out  string // report and figures
	work string // run folders
	bin  string // a vit-train binary to use instead of building one
	blas string // auto, openblas or go
}

// defaults are the full study's settings; quickDefaults replace those that
// --quick changes, unless given on the command line.
func defaults() options {
	return options{
		seeds:                3,
		epochs:               10,
		teacherEpochs:        15,
		vitTeacherEpochs:     20,
		matchedTeacherEpochs: 2,
		teacher56Epochs:      3,
		finetuneEpochs:       1,
		checkEpochs:          2,
		data:                 "/usr/share/datasets/fashion-mnist",
		out:                  "docs/experiments",
		work:                 "runs/experiments/distillation",
		blas:                 "go",
	}
}

// countFlag is one of the flags that size the study (seeds and epochs):
// each is at least 1, and --quick sets it to 1.
type countFlag struct {
	name  string
	value *int
	usage string
}

// countFlags lists o's seed and epoch flags in the order the command line
// and the report name them.
func (o *options) countFlags() []countFlag {
	return []countFlag{
		{"seeds", &o.seeds, "seeds per student arm (0, 1, …)"},
		{"epochs", &o.epochs, "epochs of every student arm at 28 px"},
		{"teacher-epochs", &o.teacherEpochs, "epochs of the ResNet-20 teacher"},
		{"vit-teacher-epochs", &o.vitTeacherEpochs, "epochs of the ViT teacher"},
		{"matched-teacher-epochs", &o.matchedTeacherEpochs, "epochs of the second ResNet-20 teacher, stopped early near or below the ViT teacher's top-1 (within a point, or weaker: a weaker CNN whose student still wins separates teacher type from teacher accuracy)"},
		{"teacher56-epochs", &o.teacher56Epochs, "epochs of the ResNet-20 teacher at 56 px"},
		{"finetune-epochs", &o.finetuneEpochs, "epochs of fine-tuning at 56 px"},
		{"check-epochs", &o.checkEpochs, "epochs of the live-teacher vs .npy exactness check"},
	}
}

func quickDefaults(o *options, set map[string]bool) {
	for _, f := range o.countFlags() {
		if !set[f.name] {
			*f.value = 1
		}
	}
	if !set["train-subset"] {
		o.trainSubset = 384
	}
	if !set["eval-subset"] {
		o.evalSubset = 384
	}
}

func parseFlags(args []string) (options, error) {
	o := defaults()
	fs := flag.NewFlagSet("distillation", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./scripts/experiments/distillation [--quick] [flags]\n\n"+
			"Runs DeiT's distillation ablations on Fashion-MNIST with vit-train and writes\n"+
			"OUT/distillation.md with its figures. Run it again with the same flags to\n"+
			"continue a stopped study.\n\n")
		fs.PrintDefaults()
	}
	fs.BoolVar(&o.quick, "quick", false, "check the pipeline end to end: 1 seed, 1 epoch per run, 384 training and 384 test images, in a temporary folder (unless --work/--out)")
	fs.BoolVar(&o.reportOnly, "report-only", false, "train nothing: write the report from the runs finished so far")
	for _, f := range o.countFlags() {
		fs.IntVar(f.value, f.name, *f.value, f.usage)
	}
	fs.IntVar(&o.trainSubset, "train-subset", 0, "train on the first N training images (0: all 60,000)")
	fs.IntVar(&o.evalSubset, "eval-subset", 0, "evaluate on the first N test images (0: all 10,000)")
	fs.StringVar(&o.data, "data", o.data, "folder of the Fashion-MNIST IDX files")
	fs.StringVar(&o.out, "out", o.out, "folder for distillation.md and its figures (the default is relative to the repository root)")
	fs.StringVar(&o.work, "work", o.work, "folder for the run folders and the vit-train binary (the default is relative to the repository root)")
	fs.StringVar(&o.bin, "bin", "", "vit-train binary to use instead of building one")
	fs.BoolVar(&o.rebuild, "rebuild", false, "build vit-train again although the work folder holds the one built for the study")
	fs.StringVar(&o.blas, "blas", o.blas, "build: go (the default build, Go assembly kernels: the fastest), openblas (-tags openblas), or auto (openblas when libopenblas-dev is installed)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.quick {
		quickDefaults(&o, set)
	}
	for _, f := range o.countFlags() {
		if *f.value < 1 {
			return o, fmt.Errorf("--%s %d: must be at least 1", f.name, *f.value)
		}
	}
	if o.trainSubset < 0 || o.evalSubset < 0 {
		return o, errors.New("--train-subset and --eval-subset must not be negative")
	}
	switch o.blas {
	case "auto", "openblas", "go":
	default:
		return o, fmt.Errorf("--blas %q: want auto, openblas or go", o.blas)
	}
	var err error
	switch {
	case o.quick && (!set["work"] || !set["out"]):
		tmp, err := os.MkdirTemp("", "vit-train-distillation-quick-")
		if err != nil {
			return o, err
		}
		if !set["work"] {
			o.work = filepath.Join(tmp, "runs")
		}
		if !set["out"] {
			o.out = filepath.Join(tmp, "report")
		}
	case !o.quick && (!set["work"] || !set["out"]):
		// The default folders are the repository's, wherever it runs from.
		root, err := moduleRoot()
		if err != nil {
			return o, err
		}
		if !set["out"] {
			o.out = filepath.Join(root, o.out)
		}
		if !set["work"] {
			o.work = filepath.Join(root, o.work)
		}
	}
	for _, p := range []*string{&o.data, &o.out, &o.work} {
		if *p, err = filepath.Abs(*p); err != nil {
			return o, err
		}
	}
	if o.bin != "" {
		if o.bin, err = filepath.Abs(o.bin); err != nil {
			return o, err
		}
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "distillation:", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "distillation:", err)
		if errors.Is(err, errInterrupted) {
			os.Exit(130)
		}
		os.Exit(1)
	}
}

func run(o options) error {
	start := time.Now()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := checkData(o.data); err != nil {
		return err
	}
	if err := os.MkdirAll(o.work, 0o755); err != nil {
		return err
	}
	cfgDir := filepath.Join(o.work, "configs")
	p := newPlan(o, cfgDir)
	if err := checkExisting(o, p); err != nil {
		return err
	}
	if err := writeConfigs(cfgDir, p.started()); err != nil {
		return err
	}
	r := &runner{out: os.Stdout}
	if !o.reportOnly {
		fmt.Printf("study: %d runs in %s; report in %s\n", len(p.runs), o.work, o.out)
		var err error
		if r.build, err = buildBinary(ctx, o); err != nil {
			return err
		}
		for i, rn := range p.runs {
			if err := r.do(ctx, rn, i+1, len(p.runs)); err != nil {
				if errors.Is(err, errInterrupted) {
					return fmt.Errorf("%w; to continue: %s", err, continueCommand(o))
				}
				return fmt.Errorf("%s: %w", rn.ID, err)
			}
		}
	}
	res, err := collect(o, p)
	if err != nil {
		return err
	}
	rep := analyse(o, p, res)
	if o.quick {
		rep.Estimate = estimateFull(o, p, res)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	if err := writeFigures(o.out, rep); err != nil {
		return err
	}
	md := rep.Markdown()
	if err := writeFileAtomic(filepath.Join(o.out, "distillation.md"), []byte(md)); err != nil {
		return err
	}
	fmt.Printf("\nwrote %s and its figures (%s)\n", filepath.Join(o.out, "distillation.md"), time.Since(start).Round(time.Second))
	if o.quick {
		fmt.Print("\n" + rep.SummaryText())
	}
	if !o.reportOnly {
		if missing := rep.Missing(); len(missing) > 0 {
			return fmt.Errorf("the report lacks results of %v", missing)
		}
	}
	if bad := rep.FailedChecks(); len(bad) > 0 {
		return fmt.Errorf("consistency checks failed: %v", bad)
	}
	return nil
}

// continueCommand is the command that continues a stopped study.
func continueCommand(o options) string {
	c := "go run ./scripts/experiments/distillation" + flagsLine(o)
	if o.quick {
		c += " --work " + quoteArgs([]string{o.work}) + " --out " + quoteArgs([]string{o.out})
	} else if d := defaults(); relPath(o.work) != d.work || relPath(o.out) != d.out {
		c += " --work " + quoteArgs([]string{o.work}) + " --out " + quoteArgs([]string{o.out})
	}
	return c
}

// checkData checks that dir holds the four Fashion-MNIST IDX files (gzipped
// or not).
func checkData(dir string) error {
	for _, name := range []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"} {
		if _, err := findIDX(dir, name); err != nil {
			return fmt.Errorf("%w (install Debian's dataset-fashion-mnist, or give --data)", err)
		}
	}
	return nil
}
