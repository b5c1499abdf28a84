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

// Markdown renders the report.
func (r *report) Markdown() string {
	var b strings.Builder
	o := r.Opts
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Distillation on Fashion-MNIST: DeiT's ablations with vit-train\n\n")
	if o.Quick {
		w("> **Quick mode** (`--quick`): a check of the pipeline on %d training and %d test images, %s per run, %s. "+
			"Its numbers say nothing about distillation; the verdicts below are computed from them as in the full study.\n\n", o.TrainSubset, o.EvalSubset, study.Plural(o.epochs, "epoch"), study.Plural(o.seeds, "seed"))
	}
	if d := defaults(); !o.Quick && (o.epochs < d.epochs || o.teacherEpochs < d.teacherEpochs || !o.core && o.vitTeacherEpochs < d.vitTeacherEpochs) {
		teachers := "the ResNet-20 teacher " + study.Plural(o.teacherEpochs, "epoch")
		defaultEpochs := fmt.Sprintf("%d and %d", d.epochs, d.teacherEpochs)
		if !o.core {
			teachers = fmt.Sprintf("teachers %s (ResNet-20) and %s (ViT)", study.Plural(o.teacherEpochs, "epoch"), study.Plural(o.vitTeacherEpochs, "epoch"))
			defaultEpochs = fmt.Sprintf("%d, %d and %d", d.epochs, d.teacherEpochs, d.vitTeacherEpochs)
		}
		w("> **Short budget**: students %s, %s, against the script's defaults of %s epochs and DeiT's 300. "+
			"The verdicts below are about this budget.\n\n", study.Plural(o.epochs, "epoch"), teachers, defaultEpochs)
	}
	w("This report is written by `%s`; every number, and every verdict, is computed from the run folders in `%s`.\n\n",
		reportCommand(o), study.RelPath(o.Work))

	w("## Setup\n\n")
	w("The recipes are the YAML files in `scripts/experiments/distillation/configs/` (copied into the work folder, where the commands below name them).\n\n")
	trainN, evalN := 60000, 10000
	if o.TrainSubset > 0 {
		trainN = min(trainN, o.TrainSubset)
	}
	if o.EvalSubset > 0 {
		evalN = min(evalN, o.EvalSubset)
	}
	w("- **Data**: Fashion-MNIST from `%s` (`train-images-idx3-ubyte`, `t10k-images-idx3-ubyte` and their labels, IDX, gzipped in Debian's `dataset-fashion-mnist`): %d training images, %d test images. The test set is the validation set of every run; all numbers are of the last epoch's weights (`last.safetensors`), not of the best epoch. "+
		"No recipe of this study was chosen on held-out training images (`data.val_split`): the students' recipe is DeiT's setting (`student.yaml`'s header), not tuned on these data.\n", o.Data, trainN, evalN)
	w("- **Students**: `deit_fmnist_distilled_patch4_28` (dim 64, depth 4, 4 heads, patch 4, a class token and a distillation token), and the plain `vit_fmnist_patch4_28` for the first arm. Every arm: the same recipe (`student.yaml`: AdamW lr 1e-3, weight decay 0.05, batch 128, warmup 1 epoch + cosine, pad-crop + flip), %s, %s (a seed fixes the initialisation, the data order and the augmentations, so arms are paired by seed).\n", study.Plural(o.epochs, "epoch"), study.SeedRange(o.seeds))
	w("- **Distillation** (DeiT's loss): (1−α)·CE(class head, labels) + α·D(distillation head, teacher), D the KL divergence at temperature τ (soft) or the cross-entropy on the teacher's argmax (hard). The teacher runs frozen on each augmented batch, except in the `.npy` arm, whose teacher logits were computed once by `vit-train logits` on the un-augmented training images. Test top-1 is reported for the class head, the distillation head and their average (the logits' mean, DeiT's inference rule).\n")
	if o.core {
		w("- **Teacher**, trained by vit-train on the same data: ResNet-20 (`resnet20.yaml`, SGD + Nesterov, %s; its top-1 is its last epoch's evaluation, checked against its test logits). "+
			"It is a single run (seed 0), so the verdicts on distillation from it are about this teacher.\n", study.Plural(o.teacherEpochs, "epoch"))
		w("- **Core arms only** (`--core`): the plain ViT, the distilled architecture without a teacher and hard distillation from the CNN, with the CNN teacher; the other arms, teachers and checks are not part of this run.\n")
	} else {
		w("- **Teachers**, trained by vit-train on the same data: ResNet-20 (`resnet20.yaml`, SGD + Nesterov, %s; the ResNets' top-1 is their last epoch's evaluation, checked against their test logits), a ViT of about 20× the student (`vit_teacher.yaml`, %s), "+
			"and the same ResNet-20 recipe stopped after %s, near or below the ViT's top-1 (DeiT compares teacher types at similar accuracy; a weaker CNN whose student still wins separates type from accuracy). "+
			"Each teacher is a single run (seed 0): the students' seeds measure the students' variation, not the teachers', so the teacher-type verdict is conditional on these teachers, not about convnets and transformers in general.\n",
			study.Plural(o.teacherEpochs, "epoch"), study.Plural(o.vitTeacherEpochs, "epoch"), study.Plural(o.matchedTeacherEpochs, "epoch"))
	}
	w("- **Fine-tuning at a higher resolution** with distillation is measured by `scripts/experiments/finetune`'s arm (f), in its full study (not `--core`): Fashion-MNIST trained at 14 px and fine-tuned at its native 28 px, where the higher resolution carries real extra pixels.\n")
	b.WriteString(r.Tally.BuildLine())
	b.WriteString(r.Tally.ComputeLine())

	w("## Teachers\n\n")
	w("| teacher | model | parameters | epochs | test top-1 (%%) | training loop | wall-clock |\n|---|---|---|---|---|---|---|\n")
	for _, t := range r.Teachers {
		w("| %s | %s | %s | %d | %s | %s | %s |\n", t.Name, t.Model, study.OrDash(t.Params), t.Epochs, study.Num(t.Top1), study.Minutes(t.TrainS), study.Minutes(t.WallS))
	}
	if tv := r.teacher(teacherViT); tv != nil && tv.Done {
		w("\n")
		for _, id := range []string{teacherCNN, teacherCNNMatched} {
			if tc := r.teacher(id); tc != nil && tc.Done {
				w("- %s vs ViT: %+.2f points, %s.\n", tc.Name, tc.Top1-tv.Top1, similarity(tc.Top1-tv.Top1))
			}
		}
	}
	if tc, hard := r.teacher(teacherCNN), r.arm("hard_cnn"); tc != nil && tc.Done && hard != nil && len(hard.Seeds) > 0 {
		s := study.Summarize(hard.Avg).Mean
		w("\nThe CNN is %s than the student it distils into (%.2f%% vs %.2f%%).\n", map[bool]string{true: "stronger", false: "not stronger"}[tc.Top1 > s], tc.Top1, s)
	}

	w("\n## Students\n\n")
	w("Test top-1 (%%, mean ± standard deviation over seeds), agreement with the teachers (%% of test images on which the student, both heads averaged, predicts the teacher's class) and training time (the training loop's seconds per epoch, and each run's wall-clock time including evaluation).\n\n")
	b.WriteString(r.studentTable())
	w("\n![Test top-1 by arm](%s)\n\n", barFigure(o))
	w("![Validation top-1 per epoch](%s)\n\n", curveFigure(o))

	w("## DeiT's findings, measured\n\n")
	w("Each verdict compares the arms' mean top-1 (both heads averaged unless said otherwise) over %s. %s\n\n", r.seedCount(), study.VerdictRule(o.seeds))
	for _, f := range r.Findings {
		w("- **%s: %s.** %s.\n", f.Claim, f.Verdict, f.Detail)
	}

	w("\n## Teacher logits from a file\n\n")
	if len(r.NPY) == 0 {
		w("Not measured yet.\n")
	}
	for _, s := range r.NPY {
		w("%s\n\n", s)
	}

	b.WriteString(study.ChecksMarkdown(r.Checks, r.Tally.Missing, r.Estimate, defaultsText()))

	npyLogits := ", and `vit-train logits --split train` of the ResNet-20 for the `.npy` arm"
	if o.core {
		npyLogits = ""
	}
	w("\n## Commands\n\nThe study ran these vit-train commands (seed 0; the other seeds differ only in `seed=`, and `--out`), each followed by `vit-train eval` (ViTs) and `vit-train logits --split test` of its `last.safetensors`%s:\n\n```sh\n", npyLogits)
	for _, c := range r.Tally.Commands {
		w("%s\n", c)
	}
	w("```\n")
	return b.String()
}

// studentTable is the arms' table in Markdown.
func (r *report) studentTable() string {
	var b strings.Builder
	b.WriteString("| arm | seeds | class head | distillation head | both heads | agreement with CNN | agreement with ViT | s/epoch | wall-clock per run |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, a := range r.Arms {
		dist, avg := study.PM(study.Summarize(a.Dist)), study.PM(study.Summarize(a.Avg))
		if !a.Arm.Distilled() {
			dist, avg = "–", study.PM(study.Summarize(a.Avg))
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", a.Arm.Label, len(a.Seeds), study.PM(study.Summarize(a.Cls)), dist, avg,
			study.PM(study.Summarize(a.AgreeCNN)), study.PM(study.Summarize(a.AgreeViT)), study.Num(study.Summarize(a.SecPerEpoch).Mean),
			study.AtLeast(study.Minutes(study.Summarize(a.WallS).Mean), a.WallAtLeast))
	}
	b.WriteString(r.Tally.UnrecordedFootnote())
	return b.String()
}

// SummaryText is the part of the report printed at the end of --quick.
func (r *report) SummaryText() string {
	var b strings.Builder
	b.WriteString("teachers:")
	for _, t := range r.Teachers {
		fmt.Fprintf(&b, "  %s %s%%", t.Name, study.Num(t.Top1))
	}
	b.WriteString("\n\n" + r.studentTable() + "\n")
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "- %s: %s\n", f.Claim, f.Verdict)
	}
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
	return fmt.Sprintf("%s, %s per student, teachers %d, %d and %d epochs",
		study.Plural(d.seeds, "seed"), study.Plural(d.epochs, "epoch"), d.teacherEpochs, d.vitTeacherEpochs, d.matchedTeacherEpochs)
}
