package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"time"
)

// Missing lists the planned runs without results.
func (r *report) Missing() []string { return r.missing }

// FailedChecks lists the consistency checks that failed.
func (r *report) FailedChecks() []string {
	var out []string
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c.Name+": "+c.Detail)
		}
	}
	return out
}

// Markdown renders the report.
func (r *report) Markdown() string {
	var b strings.Builder
	o := r.Opts
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Distillation on Fashion-MNIST: DeiT's ablations with vit-train\n\n")
	if o.quick {
		w("> **Quick mode** (`--quick`): a check of the pipeline on %d training and %d test images, %s per run, %s. "+
			"Its numbers say nothing about distillation; the verdicts below are computed from them as in the full study.\n\n", o.trainSubset, o.evalSubset, plural(o.epochs, "epoch"), plural(o.seeds, "seed"))
	}
	if d := defaults(); !o.quick && (o.epochs < d.epochs || o.teacherEpochs < d.teacherEpochs || o.vitTeacherEpochs < d.vitTeacherEpochs) {
		w("> **Short budget**: students %s, teachers %s (ResNet-20) and %s (ViT), against the script's defaults of %d, %d and %d epochs and DeiT's 300. "+
			"The verdicts below are about this budget.\n\n", plural(o.epochs, "epoch"), plural(o.teacherEpochs, "epoch"), plural(o.vitTeacherEpochs, "epoch"), d.epochs, d.teacherEpochs, d.vitTeacherEpochs)
	}
	w("This report is written by `go run ./scripts/experiments/distillation%s`; every number, and every verdict, is computed from the run folders in `%s`.\n\n",
		flagsLine(o), relPath(o.work))

	w("## Setup\n\n")
	w("The recipes are the YAML files in `scripts/experiments/distillation/configs/` (copied into the work folder, where the commands below name them).\n\n")
	trainN, evalN := 60000, 10000
	if o.trainSubset > 0 {
		trainN = min(trainN, o.trainSubset)
	}
	if o.evalSubset > 0 {
		evalN = min(evalN, o.evalSubset)
	}
	w("- **Data**: Fashion-MNIST from `%s` (`train-images-idx3-ubyte`, `t10k-images-idx3-ubyte` and their labels, IDX, gzipped in Debian's `dataset-fashion-mnist`): %d training images, %d test images. The test set is the validation set of every run; all numbers are of the last epoch's weights (`last.safetensors`), not of the best epoch.\n", o.data, trainN, evalN)
	w("- **Students**: `deit_fmnist_distilled_patch4_28` (dim 64, depth 4, 4 heads, patch 4, a class token and a distillation token), and the plain `vit_fmnist_patch4_28` for the first arm. Every arm: the same recipe (`student.yaml`: AdamW lr 1e-3, weight decay 0.05, batch 128, warmup 1 epoch + cosine, pad-crop + flip), %s, %s (a seed fixes the initialisation, the data order and the augmentations, so arms are paired by seed).\n", plural(o.epochs, "epoch"), seedRange(o.seeds))
	w("- **Distillation** (DeiT's loss): (1−α)·CE(class head, labels) + α·D(distillation head, teacher), D the KL divergence at temperature τ (soft) or the cross-entropy on the teacher's argmax (hard). The teacher runs frozen on each augmented batch, except in the `.npy` arm, whose teacher logits were computed once by `vit-train logits` on the un-augmented training images. Test top-1 is reported for the class head, the distillation head and their average (the logits' mean, DeiT's inference rule).\n")
	w("- **Teachers**, trained by vit-train on the same data: ResNet-20 (`resnet20.yaml`, SGD + Nesterov, %s; the ResNets' top-1 is their last epoch's evaluation, checked against their test logits), a ViT of about 20× the student (`vit_teacher.yaml`, %s), "+
		"the same ResNet-20 recipe stopped after %s, near or below the ViT's top-1 (DeiT compares teacher types at similar accuracy; a weaker CNN whose student still wins separates type from accuracy) and, for the fine-tuning arm, ResNet-20 at 56 px (%s).\n",
		plural(o.teacherEpochs, "epoch"), plural(o.vitTeacherEpochs, "epoch"), plural(o.matchedTeacherEpochs, "epoch"), plural(o.teacher56Epochs, "epoch"))
	w("- **Fine-tuning at 56 px**: `vit-train finetune --img-size 56` from each seed's hard-distilled 28 px student (position embeddings resampled from a 7×7 to a 14×14 grid), %s of `finetune56.yaml` (SGD, layer decay 0.75) with hard distillation from the 56 px ResNet-20.\n", plural(o.finetuneEpochs, "epoch"))
	bins := "no run finished yet"
	switch n := len(r.Binaries); {
	case n == 1:
		bins = fmt.Sprintf("every run ran the same binary (SHA-256 %.12s…)", r.Binaries[0])
	case n > 1:
		bins = fmt.Sprintf("the runs ran %d different binaries (the study was continued with --rebuild or --bin); the first: %s build of commit %s", n, r.Build, r.Commit)
	}
	w("- **Build and machine**: vit-train, %s build of commit %s; %s; %d CPUs (%s); report written %s.\n",
		r.Build, r.Commit, bins, runtime.NumCPU(), cpuModel(), time.Now().UTC().Format("2006-01-02"))
	w("- **Compute**: the finished runs' vit-train processes (training, evaluation, logits) took %s of wall-clock time and %s of CPU time.\n\n", minutes(r.WallS), minutes(r.CPUS))

	w("## Teachers\n\n")
	w("| teacher | model | parameters | epochs | test top-1 (%%) | training loop | wall-clock |\n|---|---|---|---|---|---|---|\n")
	for _, t := range r.Teachers {
		w("| %s | %s | %s | %d | %s | %s | %s |\n", t.Name, t.Model, orDash(t.Params), t.Epochs, num(t.Top1), minutes(t.TrainS), minutes(t.WallS))
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
		s := summarize(hard.Avg).Mean
		w("\nThe CNN is %s than the student it distils into (%.2f%% vs %.2f%%).\n", map[bool]string{true: "stronger", false: "not stronger"}[tc.Top1 > s], tc.Top1, s)
	}

	w("\n## Students\n\n")
	w("Test top-1 (%%, mean ± standard deviation over seeds), agreement with the teachers (%% of test images on which the student, both heads averaged, predicts the teacher's class) and training time (the training loop's seconds per epoch, and each run's wall-clock time including evaluation).\n\n")
	b.WriteString(r.studentTable())
	w("\n![Test top-1 by arm](%s)\n\n", barFigure)
	w("![Validation top-1 per epoch](%s)\n\n", curveFigure)

	w("## DeiT's findings, measured\n\n")
	w("Each verdict compares the arms' mean top-1 (both heads averaged unless said otherwise) over %s; the standard error of each difference says whether the seeds resolve it.\n\n", plural(o.seeds, "seed"))
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

	w("## Fine-tuning at 56 px\n\n")
	b.WriteString(r.finetuneTable())

	w("\n## Checks\n\n")
	for _, c := range r.Checks {
		mark := "passed"
		if !c.OK {
			mark = "**failed**"
		}
		w("- %s: %s (%s).\n", c.Name, mark, c.Detail)
	}
	if len(r.missing) > 0 {
		w("- Runs not finished (left out of this report): %s.\n", strings.Join(r.missing, ", "))
	}

	if r.Estimate != nil {
		w("\n## Time of the full study, estimated from this run\n\n")
		b.WriteString(r.Estimate.Markdown())
	}

	w("\n## Commands\n\nThe study ran these vit-train commands (seed 0; the other seeds differ only in `seed=`, `--out` and, for fine-tuning, `--from`), each followed by `vit-train eval` (ViTs) and `vit-train logits --split test` of its `last.safetensors`, and `vit-train logits --split train` of the ResNet-20 for the `.npy` arm:\n\n```sh\n")
	for _, c := range r.Commands {
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
		dist, avg := pm(summarize(a.Dist)), pm(summarize(a.Avg))
		if !a.Arm.Distilled() {
			dist, avg = "–", pm(summarize(a.Avg))
		}
		label := a.Arm.Label
		if a.Arm.ImageSize != 0 {
			label += " ¹"
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", label, len(a.Seeds), pm(summarize(a.Cls)), dist, avg,
			pm(summarize(a.AgreeCNN)), pm(summarize(a.AgreeViT)), num(summarize(a.SecPerEpoch).Mean), minutes(summarize(a.WallS).Mean))
	}
	b.WriteString("\n¹ 56 px input; its CNN agreement is with the 56 px ResNet-20, and its epochs are fine-tuning epochs.\n")
	return b.String()
}

// finetuneTable lists the fine-tuning arm per seed.
func (r *report) finetuneTable() string {
	a := r.arm(finetuneArm.Key)
	if a == nil || len(a.Seeds) == 0 {
		return "Not measured yet.\n"
	}
	var b strings.Builder
	b.WriteString("| seed | 28 px start, both heads | 56 px class head | 56 px distillation head | 56 px both heads | agreement with the 56 px CNN |\n|---|---|---|---|---|---|\n")
	for i, s := range a.Seeds {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", s, num(a.ParentAvg[i]), num(a.Cls[i]), num(a.Dist[i]), num(a.Avg[i]), num(a.AgreeCNN[i]))
	}
	if t := r.teacher(teacherCNN56); t != nil && t.Done {
		fmt.Fprintf(&b, "\nThe 56 px ResNet-20 teacher: %.2f%%.\n", t.Top1)
	}
	return b.String()
}

// SummaryText is the part of the report printed at the end of --quick.
func (r *report) SummaryText() string {
	var b strings.Builder
	b.WriteString("teachers:")
	for _, t := range r.Teachers {
		fmt.Fprintf(&b, "  %s %s%%", t.Name, num(t.Top1))
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

// flagsLine is the command's flags that differ from the defaults of its
// mode (the full study's, or --quick's).
func flagsLine(o options) string {
	d := defaults()
	var s []string
	if o.quick {
		quickDefaults(&d, map[string]bool{})
		s = append(s, "--quick")
	}
	def := d.countFlags()
	for i, f := range o.countFlags() {
		if *f.value != *def[i].value {
			s = append(s, fmt.Sprintf("--%s %d", f.name, *f.value))
		}
	}
	for _, f := range []struct {
		name   string
		v, def int
	}{{"train-subset", o.trainSubset, d.trainSubset}, {"eval-subset", o.evalSubset, d.evalSubset}} {
		if f.v != f.def {
			s = append(s, fmt.Sprintf("--%s %d", f.name, f.v))
		}
	}
	if o.data != d.data {
		s = append(s, "--data "+quoteArgs([]string{o.data}))
	}
	if len(s) == 0 {
		return ""
	}
	return " " + strings.Join(s, " ")
}

// plural writes n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// seedRange names the seeds 0 … n−1.
func seedRange(n int) string {
	if n == 1 {
		return "seed 0"
	}
	return fmt.Sprintf("seeds 0–%d", n-1)
}

func num(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.2f", v)
}

func minutes(s float64) string {
	switch {
	case math.IsNaN(s):
		return "–"
	case s < 120:
		return fmt.Sprintf("%.0f s", s)
	case s < 7200:
		return fmt.Sprintf("%.1f min", s/60)
	}
	return fmt.Sprintf("%.1f h", s/3600)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// cpuModel is the first model name in /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
