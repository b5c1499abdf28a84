// Command finetune shows why people fine-tune at a higher resolution (ViT
// at 224 px, then 384 px; FixRes): on the full Fashion-MNIST (Debian's
// dataset-fashion-mnist), a ViT of patch 2 trained at 14 px (the 28 px
// images downsampled, 7×7 tokens) and fine-tuned at the native 28 px
// (14×14 tokens, position embeddings resampled) against the same ViT
// trained at 28 px from scratch, with several seeds per arm. It writes
// docs/experiments/finetune.md with a figure of top-1 against compute.
//
//	go run ./scripts/experiments/finetune           # the full study (hours)
//	go run ./scripts/experiments/finetune --quick   # every arm on a few hundred images, in a temporary folder
//	go run ./scripts/experiments/finetune --core    # only the plain ViT's arms (a)-(e): no teacher, no distilled architecture
//
// The arms, per seed: (a) 28 px from scratch; (b) 14 px from scratch,
// evaluated at 14 px; (c) (b) evaluated at 28 px without fine-tuning; (d)
// (b) fine-tuned at 28 px; (e) (b) fine-tuned for the same steps at 14 px,
// the control; and, for hard distillation from a 28 px ResNet-20 during
// the fine-tune, which needs a distillation token and head: (b′) the
// distilled architecture trained at 14 px without a teacher, (d′) (b′)
// fine-tuned at 28 px without a teacher and (f) with the teacher.
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
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
)

// name is the study's folder under scripts/experiments and its report's
// base name.
const name = "finetune"

// options are the command's settings.
type options struct {
	study.Common

	seeds          int
	epochs         int // from-scratch epochs of (a), (b) and (b′)
	finetuneEpochs int // epochs of (d), (e), (d′) and (f)
	teacherEpochs  int // the ResNet-20 teacher's epochs
	// margin is how many points below (a) the fine-tuned (d) may stay and
	// still count as reaching it.
	margin float64
	// core runs only the plain ViT's arms, (a)-(e): the claim that the
	// fine-tune reaches training at 28 px, and its control.
	core bool
}

// defaults are the full study's settings.
func defaults() options {
	return options{
		Common:         study.DefaultCommon(name),
		seeds:          3,
		epochs:         10,
		finetuneEpochs: 2,
		teacherEpochs:  15,
		margin:         0.5,
	}
}

// countFlags lists o's seed and epoch flags in the order the command line
// and the report name them.
func (o *options) countFlags() []study.CountFlag {
	return []study.CountFlag{
		{Name: "seeds", Value: &o.seeds, Usage: "seeds per arm (0, 1, …), fixed when the study starts: the verdicts' t test assumes seeds are not added after reading them"},
		{Name: "epochs", Value: &o.epochs, Usage: "epochs of the arms trained from scratch, at 28 px and at 14 px"},
		{Name: "finetune-epochs", Value: &o.finetuneEpochs, Usage: "epochs of the fine-tuning arms, at 28 px and at 14 px"},
		{Name: "teacher-epochs", Value: &o.teacherEpochs, Usage: "epochs of the ResNet-20 teacher at 28 px"},
	}
}

func parseFlags(args []string) (options, error) {
	o := defaults()
	cmd := study.Command{
		Name: name,
		About: "Trains a ViT at 14 px and fine-tunes it at 28 px on Fashion-MNIST with vit-train,\n" +
			"against training at 28 px from scratch, and writes OUT/finetune.md with its\n" +
			"figure. Run it again with the same flags to continue a stopped study.",
		Counts: o.countFlags(),
		Extra: func(fs *flag.FlagSet) {
			fs.Float64Var(&o.margin, "margin", o.margin, "points of top-1 below training at 28 px from scratch within which the fine-tuned model counts as reaching it")
			fs.BoolVar(&o.core, "core", false, "run only the plain ViT's arms (a)-(e), without the distilled architecture and the ResNet-20 teacher: the claim that the fine-tune reaches training at 28 px from scratch, and its control")
		},
	}
	if _, err := study.Parse(cmd, args, &o.Common); err != nil {
		return o, err
	}
	if !(o.margin >= 0) {
		return o, fmt.Errorf("--margin %g: must not be negative", o.margin)
	}
	return o, nil
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
	rep, err := analyse(o, p, res)
	if err != nil {
		return err
	}
	if o.Quick {
		full := defaults()
		full.Data, full.core = o.Data, o.core
		rep.Estimate = study.EstimateFull(p, newPlan(full, ""), res, kindLabel)
	}
	return study.WriteReport(o.Common, study.ReportName(name, o.core), rep, start)
}

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
	if o.margin != d.margin {
		extra = append(extra, "--margin "+study.FmtFloat(o.margin))
	}
	if o.core {
		extra = append(extra, "--core")
	}
	return study.FlagsLine(o.Common, o.countFlags(), d.countFlags(), d.Data, extra...)
}
