package main

import (
	"fmt"
	"strings"

	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
)

// Missing lists the planned runs without results.
func (r *report) Missing() []string { return r.Tally.Missing }

// FailedChecks lists the consistency checks that failed.
func (r *report) FailedChecks() []string { return study.FailedChecks(r.Checks) }

// WriteFigures writes nothing: the report is its tables.
func (r *report) WriteFigures(string) error { return nil }

// Data sizes of the full Fashion-MNIST.
const (
	trainImages = 60000
	testImages  = 10000
)

// heldOutImages is how many training images data.val_split holds out.
func heldOutImages() int { return int(valSplit * trainImages) }

// Markdown renders the report.
func (r *report) Markdown() string {
	var b strings.Builder
	o := r.Opts
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# The from-scratch recipe, chosen on held-out training images\n\n")
	if o.Quick {
		w("> **Quick mode** (`--quick`): a check of the pipeline on %d training and %d evaluated images, %s per run, %s. "+
			"Its numbers say nothing about the recipes; the choice and the verdicts below are computed from them as in the full study.\n\n",
			o.TrainSubset, o.EvalSubset, study.Plural(o.epochs, "epoch"), study.Plural(o.seeds, "seed"))
	}
	if d := defaults(); !o.Quick && o.epochs != d.epochs {
		w("> **Another budget**: %s per run, against the yaml's %d. The choice and the verdicts below are about this budget.\n\n", study.Plural(o.epochs, "epoch"), d.epochs)
	}
	w("This report is written by `%s`; every number, and every verdict, is computed from the run folders in `%s`.\n\n",
		reportCommand(o), study.RelPath(o.Work))
	w("`configs/fashion_mnist_full.yaml` is the recipe of the main job's model on all of Fashion-MNIST, and the fine-tuning study's from-scratch recipe. " +
		"Its learning rate and batch size were chosen by a sweep of one seed per recipe scored on the 10,000 test images (the file's header), so its test top-1 flatters it. " +
		"This study chooses among that sweep's recipes on images held out from the training set, and measures the test set once, for the chosen recipe.\n\n")

	w("## Setup\n\n")
	w("The recipes are `scripts/experiments/recipe/configs/%s`, `configs/fashion_mnist_full.yaml`'s recipe (copied into the work folder, where the commands below name it), with each candidate's learning rate and batch size.\n\n", recipeFile)
	train, held, evaluated, test := trainImages-heldOutImages(), heldOutImages(), heldOutImages(), testImages
	if o.TrainSubset > 0 {
		train = min(train, o.TrainSubset)
	}
	if o.EvalSubset > 0 {
		evaluated, test = min(evaluated, o.EvalSubset), min(test, o.EvalSubset)
	}
	w("- **Which data chose the recipe**: %d of Fashion-MNIST's training images, held out with `data.val_split=%s` and `data.val_seed=%d` (the same %d images for every run; each run folder's `val_split.json` lists them); "+
		"each candidate trains on %d of the other training images and is scored on %d held-out images. The test set chose nothing: only the chosen recipe's test runs read it.\n",
		held, study.FmtFloat(valSplit), valSeed, held, train, evaluated)
	labels := make([]string, len(candidates))
	for i, c := range candidates {
		labels[i] = c.Label()
		if c.Key == yamlKey {
			labels[i] += " (the yaml's)"
		}
	}
	w("- **Candidates**: %d recipes of the yaml header's sweep, each differing from the yaml only in peak learning rate and batch size: %s. "+
		"Everything else is the yaml's: AdamW, weight decay 0.05, a warmup of half an epoch then cosine to 1e-5, no augmentation, evaluation batch 500. "+
		"The sweep's two recipes at lr 1e-3, batch 128 (the former recipe, with pad-crop and flip and a warmup of one epoch; and the same without augmentation) are not candidates, to keep the study to about an hour on one core.\n",
		len(candidates), strings.Join(labels, "; "))
	w("- **Seeds and epochs**: %s per run, %s per candidate (a seed fixes the initialisation and the data order, so the candidates are paired by seed), fixed before the runs (`study_seeds.json` in the work folder).\n",
		study.Plural(o.epochs, "epoch"), study.SeedRange(o.seeds))
	w("- **Choice**: the candidate with the highest mean held-out top-1 over the seeds (of equal means, the earlier in the table below); the verdicts say which of its leads the seeds resolve.\n")
	w("- **Test**: the chosen recipe trained on all %d training images (%s per seed, the same seeds) and scored once on %d test images. All numbers are of the last epoch's weights.\n",
		trainOr(o), study.Plural(o.epochs, "epoch"), test)
	b.WriteString(r.Tally.BuildLine())
	b.WriteString(r.Tally.ComputeLine())

	w("## Held-out top-1\n\n")
	w("Top-1 (%%) on the held-out images, mean ± standard deviation over seeds, then each seed's; the vit-train train processes' times per run.\n\n")
	b.WriteString(r.heldOutTable())

	w("\n## Choice\n\n")
	b.WriteString(r.choiceText() + "\n")

	w("\n## Verdicts\n\n")
	w("Each verdict tests the claim that the chosen recipe beats another candidate on the held-out images, over %s. %s\n\n", r.seedCount(), study.VerdictRule(o.seeds))
	if r.Chosen < 0 {
		w("No verdicts yet: no recipe is chosen.\n")
	}
	for _, c := range r.Comparisons {
		w("- %s beats %s: **%s**. %s.\n", candidates[r.Chosen].Label(), c.Other.Label(), c.Verdict, c.Diff)
	}

	w("\n## Test top-1 of the chosen recipe\n\n")
	b.WriteString(r.testText() + "\n")

	b.WriteString(study.ChecksMarkdown(r.Checks, r.Tally.Missing, r.Estimate, defaultsText()))

	w("\n## Commands\n\nThe study ran these vit-train commands for the held-out runs (seed 0; the other seeds differ only in `seed=` and `--out`), each followed by `vit-train eval` and `vit-train logits --split test` of its `last.safetensors`, which with `data.val_split` read its held-out images:\n\n```sh\n")
	for _, run := range r.Plan.Runs {
		if run.Seed == 0 && !strings.HasPrefix(run.Arm, testArm) {
			w("%s\n", study.CommandLine(run))
		}
	}
	w("```\n\n")
	for _, run := range r.Plan.Runs {
		if run.Seed == 0 && strings.HasPrefix(run.Arm, testArm) {
			w("The chosen recipe's test run (seed 0; the same evaluation and logits, of the test set): `%s`.\n", study.CommandLine(run))
		}
	}
	return b.String()
}

// trainOr is the number of training images of o: all, or its subset.
func trainOr(o options) int {
	if o.TrainSubset > 0 {
		return o.TrainSubset
	}
	return trainImages
}

// heldOutTable is the candidates' held-out table in Markdown.
func (r *report) heldOutTable() string {
	var b strings.Builder
	b.WriteString("| recipe | seeds | held-out top-1 | per seed | CPU time per run | wall-clock per run |\n|---|---|---|---|---|---|\n")
	lower := false
	for i, s := range r.HeldOut {
		label := s.Cand.Label()
		if s.Cand.Key == yamlKey {
			label += " (the yaml's)"
		}
		if i == r.Chosen {
			label = "**" + label + "** (chosen)"
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s |\n", label, len(s.Seeds), study.PM(study.Summarize(s.Top1)), perSeed(s.Top1),
			study.AtLeast(study.Minutes(study.Mean(s.CPUS)), s.TimesAtLeast), study.AtLeast(study.Minutes(study.Mean(s.WallS)), s.TimesAtLeast))
		lower = lower || s.TimesAtLeast
	}
	if lower {
		b.WriteString(r.Tally.UnrecordedFootnote())
	}
	return b.String()
}

// perSeed writes each seed's top-1.
func perSeed(top1 []float64) string {
	parts := make([]string, len(top1))
	for i, v := range top1 {
		parts[i] = study.Num(v)
	}
	return study.OrDash(strings.Join(parts, ", "))
}

// choiceText says which recipe the held-out images chose and whether it
// is the yaml's.
func (r *report) choiceText() string {
	if r.Chosen < 0 {
		return "No recipe is chosen yet: not every held-out run has finished."
	}
	c := r.HeldOut[r.Chosen]
	s := fmt.Sprintf("The held-out images chose **%s**, with a mean held-out top-1 of %s%%. ", c.Cand.Label(), study.Num(study.Mean(c.Top1)))
	if r.changed() {
		y := candidateByKey(yamlKey)
		s += fmt.Sprintf("It is not `configs/fashion_mnist_full.yaml`'s recipe (%s): **the recipe changed**. ", y.Label())
		for _, c := range r.Comparisons {
			if c.Other.Key != yamlKey {
				continue
			}
			if c.Verdict == study.Holds {
				return s + "Its lead over the yaml's recipe is resolved (see the verdicts)."
			}
			return s + "Its lead over the yaml's recipe is not resolved: the seeds do not tell the two apart (see the verdicts)."
		}
		return s
	}
	return s + "It is `configs/fashion_mnist_full.yaml`'s recipe: **the recipe did not change**."
}

// testText reports the chosen recipe's test runs.
func (r *report) testText() string {
	if r.Chosen < 0 {
		return "Not measured: no recipe is chosen yet."
	}
	t := r.Test
	if len(t.Seeds) == 0 {
		return "Not measured yet: the chosen recipe's test runs have not finished."
	}
	return fmt.Sprintf("Trained on the whole training set, %s reaches a test top-1 of %s%% (mean ± standard deviation over %s; per seed: %s), %s of CPU time (%s wall-clock) per run. "+
		"This is the study's only measurement of the test set, taken after the choice.",
		t.Cand.Label(), study.PM(study.Summarize(t.Top1)), study.SeedCount(r.Opts.seeds, []seedResults{t}, func(s seedResults) []int { return s.Seeds }), perSeed(t.Top1),
		study.AtLeast(study.Minutes(study.Mean(t.CPUS)), t.TimesAtLeast), study.AtLeast(study.Minutes(study.Mean(t.WallS)), t.TimesAtLeast))
}

// seedCount says how many seeds the held-out numbers average.
func (r *report) seedCount() string {
	return study.SeedCount(r.Opts.seeds, r.HeldOut, func(s seedResults) []int { return s.Seeds })
}

// SummaryText is the part of the report printed at the end of --quick.
func (r *report) SummaryText() string {
	var b strings.Builder
	b.WriteString(r.heldOutTable() + "\n" + r.choiceText() + "\n\n")
	for _, c := range r.Comparisons {
		fmt.Fprintf(&b, "- %s beats %s: %s (t = %.2f, p = %.3f)\n", candidates[r.Chosen].Label(), c.Other.Label(), c.Verdict, c.Diff.T(), c.Diff.P())
	}
	b.WriteString("\n" + r.testText() + "\n")
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "- check: %s: %v\n", c.Name, map[bool]string{true: "passed", false: "FAILED: " + c.Detail}[c.OK])
	}
	if r.Estimate != nil {
		fmt.Fprintf(&b, "\nestimate: %s\n", r.Estimate.Summary())
	}
	return b.String()
}

// defaultsText describes the full study's default budget.
func defaultsText() string {
	d := defaults()
	return fmt.Sprintf("%s, %s per run", study.Plural(d.seeds, "seed"), study.Plural(d.epochs, "epoch"))
}
