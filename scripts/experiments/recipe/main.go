// Command recipe chooses configs/fashion_mnist_full.yaml's learning rate
// and batch size again, on data held out from the training set instead of
// the test set its header's sweep was scored on: it trains each candidate
// recipe of that sweep (data.val_split 0.1 of the training images held
// out, the same images for every run) for several seeds, picks the one
// with the best mean held-out top-1, tests it against each other candidate
// (Student's t over the paired seeds), then trains the chosen recipe on the
// whole training set for the same seeds and measures the test set once. It
// writes docs/experiments/recipe.md.
//
//	go run ./scripts/experiments/recipe           # the full study (about an hour on one core)
//	go run ./scripts/experiments/recipe --quick   # every run on a few hundred images, in a temporary folder
//
// Each run has its own folder under --work. The command can be stopped
// (Ctrl-C: the running vit-train saves a checkpoint) and run again with the
// same flags: finished runs are skipped and an unfinished one continues
// with vit-train train --resume. --report-only writes the report from the
// runs finished so far.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
)

// name is the study's folder under scripts/experiments and its report's
// base name.
const name = "recipe"

// options are the command's settings.
type options struct {
	study.Common

	seeds  int
	epochs int
}

// defaults are the full study's settings: the yaml's 5 epochs.
func defaults() options {
	return options{Common: study.DefaultCommon(name), seeds: 3, epochs: 5}
}

// countFlags lists o's seed and epoch flags in the order the command line
// and the report name them.
func (o *options) countFlags() []study.CountFlag {
	return []study.CountFlag{
		{Name: "seeds", Value: &o.seeds, Usage: "seeds per candidate recipe (0, 1, …), and of the chosen recipe's test runs; fixed when the study starts: the verdicts' t test assumes seeds are not added after reading them"},
		{Name: "epochs", Value: &o.epochs, Usage: "epochs of every run"},
	}
}

func parseFlags(args []string) (options, error) {
	o := defaults()
	cmd := study.Command{
		Name: name,
		About: "Chooses configs/fashion_mnist_full.yaml's learning rate and batch size on images held out\n" +
			"from Fashion-MNIST's training set, measures the chosen recipe on the test set once,\n" +
			"and writes OUT/recipe.md. Run it again with the same flags to continue a stopped study.",
		Counts: o.countFlags(),
	}
	_, err := study.Parse(cmd, args, &o.Common)
	return o, err
}

func main() { study.Main(name, os.Args[1:], parseFlags, run) }

// run trains the held-out runs, chooses, trains the chosen recipe's test
// runs and writes the report.
func run(o options) error {
	start := time.Now()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfgDir := filepath.Join(o.Work, "configs")
	p := newPlan(o, cfgDir, nil)
	if err := study.Execute(ctx, o.Common, p, configFiles, cfgDir, continueCommand(o)); err != nil {
		return err
	}
	res, err := study.Collect(o.Data, p)
	if err != nil {
		return err
	}
	if chosen, ok := choose(heldOutResults(o, res), o.seeds); ok {
		p = newPlan(o, cfgDir, &candidates[chosen])
		if err := study.Execute(ctx, o.Common, p, configFiles, cfgDir, continueCommand(o)); err != nil {
			return err
		}
		if res, err = study.Collect(o.Data, p); err != nil {
			return err
		}
	}
	rep := analyse(o, p, res)
	if o.Quick {
		full := defaults()
		full.Data = o.Data
		var chosen *candidate
		if rep.Chosen >= 0 {
			chosen = &candidates[rep.Chosen]
		}
		rep.Estimate = study.EstimateFull(p, newPlan(full, "", chosen), res, kindLabel)
	}
	return study.WriteReport(o.Common, name, rep, start)
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
	return study.FlagsLine(o.Common, o.countFlags(), d.countFlags(), d.Data)
}
