// Command distillation runs DeiT's distillation ablations on the full
// Fashion-MNIST (Debian's dataset-fashion-mnist) with the vit-train binary,
// several seeds per arm, and writes docs/experiments/distillation.md with
// its figures.
//
//	go run ./scripts/experiments/distillation           # the full study (hours)
//	go run ./scripts/experiments/distillation --core    # only the plain ViT, the distilled architecture without a teacher and hard distillation from the CNN
//	go run ./scripts/experiments/distillation --quick   # every arm on a few hundred images, in a temporary folder
//
// It builds vit-train itself (the default build, whose Go assembly
// kernels train fastest; --blas openblas for the OpenBLAS one), trains the
// teachers (a ResNet-20, a ViT, and a second ResNet-20 stopped early at
// the ViT's accuracy), then for each seed the student arms: no
// distillation (the plain ViT and the distilled architecture without a
// teacher), soft distillation (DeiT's τ 3, α 0.1 and τ 1, α 0.5), hard
// distillation from the CNN, from the ViT, from the CNN of the ViT's
// accuracy and from the CNN's logits read from a .npy file. Two more runs
// check that teacher logits from a file train the same student as the live
// teacher. Distillation while fine-tuning at a higher resolution is the
// fine-tune study's (scripts/experiments/finetune), on images with real
// extra pixels.
//
// Each run has its own folder under --work. The command can be stopped
// (Ctrl-C: the running vit-train saves a checkpoint) and run again with the
// same flags: finished runs are skipped and an unfinished one continues
// with vit-train train --resume. --report-only writes the report from the
// runs finished so far.
package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
)

// name is the study's folder under scripts/experiments and its report's
// base name.
const name = "distillation"

// options are the command's settings.
type options struct {
	study.Common
	// core runs only the arms of the claim "distillation beats the same
	// architecture without a teacher": the plain ViT, the distilled
	// architecture without a teacher, hard distillation from the CNN, and
	// the CNN teacher.
	core bool

	seeds            int
	epochs           int // student epochs at 28 px
	teacherEpochs    int // the CNN teacher's epochs
	vitTeacherEpochs int
	// matchedTeacherEpochs are the epochs of the second ResNet-20, stopped
	// early so that its top-1 is close to the ViT teacher's.
	matchedTeacherEpochs int
	checkEpochs          int
}

// defaults are the full study's settings.
func defaults() options {
	return options{
		Common:               study.DefaultCommon(name),
		seeds:                3,
		epochs:               10,
		teacherEpochs:        15,
		vitTeacherEpochs:     20,
		matchedTeacherEpochs: 2,
		checkEpochs:          2,
	}
}

// countFlags lists o's seed and epoch flags in the order the command line
// and the report name them.
func (o *options) countFlags() []study.CountFlag {
	return []study.CountFlag{
		{Name: "seeds", Value: &o.seeds, Usage: "seeds per student arm (0, 1, …), fixed when the study starts: the verdicts' t test assumes seeds are not added after reading them"},
		{Name: "epochs", Value: &o.epochs, Usage: "epochs of every student arm at 28 px"},
		{Name: "teacher-epochs", Value: &o.teacherEpochs, Usage: "epochs of the ResNet-20 teacher"},
		{Name: "vit-teacher-epochs", Value: &o.vitTeacherEpochs, Usage: "epochs of the ViT teacher"},
		{Name: "matched-teacher-epochs", Value: &o.matchedTeacherEpochs, Usage: "epochs of the second ResNet-20 teacher, stopped early near or below the ViT teacher's top-1 (within a point, or weaker: a weaker CNN whose student still wins separates teacher type from teacher accuracy)"},
		{Name: "check-epochs", Value: &o.checkEpochs, Usage: "epochs of the live-teacher vs .npy exactness check"},
	}
}

func parseFlags(args []string) (options, error) {
	o := defaults()
	cmd := study.Command{
		Name: name,
		About: "Runs DeiT's distillation ablations on Fashion-MNIST with vit-train and writes\n" +
			"OUT/distillation.md with its figures. Run it again with the same flags to\n" +
			"continue a stopped study.",
		Counts: o.countFlags(),
		Extra: func(fs *flag.FlagSet) {
			fs.BoolVar(&o.core, "core", false, "run only the plain ViT, the distilled architecture without a teacher and hard distillation from the CNN (and the CNN teacher): the claim that distillation beats the same architecture without a teacher")
		},
	}
	_, err := study.Parse(cmd, args, &o.Common)
	return o, err
}

func main() { study.Main(name, os.Args[1:], parseFlags, run) }

func run(o options) error {
	start := time.Now()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfgDir := filepath.Join(o.Work, "configs")
	p := newPlan(o, cfgDir)
	if err := study.Execute(ctx, o.Common, p, configFiles, cfgDir, continueCommand(o)); err != nil {
		return err
	}
	res, err := study.Collect(o.Data, p)
	if err != nil {
		return err
	}
	rep := analyse(o, p, res)
	if o.Quick {
		full := defaults()
		full.Data, full.core = o.Data, o.core
		rep.Estimate = study.EstimateFull(p, newPlan(full, ""), res, kindLabel)
	}
	return study.WriteReport(o.Common, reportName(o), rep, start)
}

// reportName is the base name of the report and its figures in the output
// folder.
func reportName(o options) string { return study.ReportName(name, o.core) }

// continueCommand is the command that continues a stopped study.
func continueCommand(o options) string {
	return study.ContinueCommand(name, o.Common, flagsLine(o))
}

// reportCommand is the command that writes the report of o.
func reportCommand(o options) string {
	return study.ReportCommand(name, o.Common, flagsLine(o))
}

// flagsLine is the command's flags that differ from the defaults of its
// mode (the full study's, or --quick's).
func flagsLine(o options) string {
	d := defaults()
	var extra []string
	if o.core {
		extra = append(extra, "--core")
	}
	return study.FlagsLine(o.Common, o.countFlags(), d.countFlags(), d.Data, extra...)
}
