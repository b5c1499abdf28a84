package main

import (
	"fmt"
	"math"
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
	w("# Fine-tuning at a higher resolution on Fashion-MNIST: 14 px → 28 px with vit-train\n\n")
	if o.Quick {
		w("> **Quick mode** (`--quick`): a check of the pipeline on %d training and %d test images, %s per run, %s. "+
			"Its numbers say nothing about fine-tuning; the verdicts below are computed from them as in the full study.\n\n",
			o.TrainSubset, o.EvalSubset, study.Plural(o.epochs, "epoch"), study.Plural(o.seeds, "seed"))
	}
	if d := defaults(); !o.Quick && (o.epochs != d.epochs || o.finetuneEpochs != d.finetuneEpochs || !o.core && o.teacherEpochs != d.teacherEpochs) {
		kind := "Another budget"
		if o.epochs <= d.epochs && o.finetuneEpochs <= d.finetuneEpochs && (o.core || o.teacherEpochs <= d.teacherEpochs) {
			kind = "Short budget"
		}
		if o.core {
			w("> **%s**: %s from scratch, %s of fine-tuning, against the script's defaults of %d and %d. "+
				"The verdicts below are about this budget.\n\n", kind, study.Plural(o.epochs, "epoch"), study.Plural(o.finetuneEpochs, "epoch"), d.epochs, d.finetuneEpochs)
		} else {
			w("> **%s**: %s from scratch, %s of fine-tuning, a teacher of %s, against the script's defaults of %d, %d and %d. "+
				"The verdicts below are about this budget.\n\n", kind, study.Plural(o.epochs, "epoch"), study.Plural(o.finetuneEpochs, "epoch"),
				study.Plural(o.teacherEpochs, "epoch"), d.epochs, d.finetuneEpochs, d.teacherEpochs)
		}
	}
	w("This report is written by `%s`; every number, and every verdict, is computed from the run folders in `%s`.\n\n",
		reportCommand(o), study.RelPath(o.Work))
	w("The ViT is trained at 224 px and fine-tuned at 384 px because most of the training then runs on fewer tokens, and the fine-tune adapts the model to the higher resolution's extra detail and to the test-time object sizes (Touvron et al., FixRes). " +
		"This study does it in miniature on Fashion-MNIST, whose native 28 px images carry real detail that their 14 px versions lack: a ViT of patch 2 sees 7×7 tokens at 14 px and 14×14 tokens at 28 px.\n\n")

	w("## Setup\n\n")
	w("The recipes are the YAML files in `scripts/experiments/finetune/configs/` (copied into the work folder, where the commands below name them).\n\n")
	trainN, evalN := 60000, 10000
	if o.TrainSubset > 0 {
		trainN = min(trainN, o.TrainSubset)
	}
	if o.EvalSubset > 0 {
		evalN = min(evalN, o.EvalSubset)
	}
	w("- **Data**: Fashion-MNIST from `%s` (IDX, Debian's `dataset-fashion-mnist`): %d training images, %d test images, the test set being every run's validation set; all numbers are of the last epoch's weights. "+
		"At 14 px (`model.img_size=14`) vit-train's pipelines resize each 28 px image to 14×14 with PIL's antialiased bicubic filter (its kernel stretched by the downscale factor, so each output pixel averages its 2×2 block and neighbours), for training and for evaluation.\n", o.Data, trainN, evalN)
	w("- **Model**: `%s` at patch %d (`--set model.patch_size=%d`: dim 64, depth 4, 4 heads, MLP 128)", plainModel, patchSize, patchSize)
	if !o.core {
		w(", and the distilled architecture `%s` (a distillation token and head) at the same shape for the arms with and around distillation", distilledModel)
	}
	w(".\n")
	w("- **From scratch**, %s: `train.yaml` (AdamW lr 3e-3, weight decay 0.05, batch 64, warmup 0.5 epoch + cosine to 1e-5, no augmentation), %s, %s (a seed fixes the initialisation and the data order, so arms are paired by seed). "+
		"Its learning rate was chosen on 6,000 held-out training images, not on the test set ([recipe.md](recipe.md), for the patch-4 model at 28 px, 5 epochs); its batch, weight decay and schedule are `configs/fashion_mnist_full.yaml`'s, which a sweep scored on the test set chose (that file's header).\n",
		coreOr(o, "(a) and (b)", "(a), (b) and (b′)"), study.Plural(o.epochs, "epoch"), study.SeedRange(o.seeds))
	w("- **Fine-tuning**, %s: `vit-train finetune --from CKPT --img-size 28` (the position embeddings resampled from the 7×7 to the 14×14 grid, bicubic) or `--img-size 14` for the control (e), %s of `finetune.yaml`: the ViT paper's fine-tuning recipe, SGD with momentum 0.9, no weight decay, clipping at global norm 1, warmup 0.1 epoch then cosine to 0, lr 0.06 referenced to batch 512 and scaled to the batch (`optim.scale_lr`), no augmentation.\n", coreOr(o, "(d) and (e)", "(d), (e), (d′) and (f)"), study.Plural(o.finetuneEpochs, "epoch"))
	w("- **Evaluation at 28 px without fine-tuning**, (c): `vit-train eval --img-size 28` of (b)'s checkpoint, the position embeddings resampled the same way.\n")
	if o.core {
		w("- **Core arms only** (`--core`): the plain ViT's arms (a)-(e); the distilled architecture's arms (b′), (d′) and (f) and the ResNet-20 teacher are not part of this run.\n")
	} else {
		w("- **Distillation**, (f): DeiT's hard distillation, (1−α)·CE(class head, labels) + α·CE(distillation head, the teacher's argmax), α 0.5, from a ResNet-20 trained at 28 px (`resnet20.yaml`, %s; one teacher, a single run, for all seeds, so (f)'s verdict is about this teacher), run frozen on each fine-tuning batch. "+
			"vit-train distils only into a model with a distillation head (`distill.type=hard` on the plain ViT is refused: \"needs a distilled model with a distillation head\"), so (f) fine-tunes the distilled architecture: (b′) is trained at 14 px without a teacher exactly as (b), and (d′), its fine-tune without a teacher, is (f)'s control. "+
			"The distilled architecture's top-1 averages its two heads (DeiT's inference rule).\n", study.Plural(o.teacherEpochs, "epoch"))
	}
	w("- **Compute**: training FLOPs = 3 × forward FLOPs per image × images seen (epochs × training images): the forward pass and a backward pass of about twice its cost. " +
		"The forward FLOPs are `vit-train info --json`'s `forward_gflops_per_image` for the arm's model and size (table below). A fine-tuned arm counts the arm it starts from: (d) = (b) + its fine-tune. ")
	if o.core {
		w("Evaluation is not counted. ")
	} else {
		w("Evaluation is not counted, nor, for (f), the teacher's forward passes and training (vit-train info counts ViTs only; their CPU time is given below). ")
	}
	w("CPU and wall-clock times are the vit-train train and finetune processes of the arm and of the arm it starts from.\n")
	b.WriteString(r.Tally.BuildLine())
	b.WriteString(r.Tally.ComputeLine())

	w("## Results\n\n")
	w("Test top-1 (%%, mean ± standard deviation over seeds) and training compute per seed.\n\n")
	b.WriteString(r.armTable())
	w("\n![Test top-1 against training compute](%s)\n\n", computeFigure(o))
	switch t := r.Teacher; {
	case o.core:
	case t.Done:
		w("The ResNet-20 teacher (%s parameters, %s at 28 px) reaches %.2f%%; it took %s of CPU time (%s wall-clock).\n\n", study.OrDash(t.Params), study.Plural(t.Epochs, "epoch"), t.Top1,
			study.AtLeast(study.Minutes(t.CPUS), t.TimesAtLeast), study.AtLeast(study.Minutes(t.WallS), t.TimesAtLeast))
	default:
		w("The ResNet-20 teacher has not finished yet.\n\n")
	}

	w("## Verdicts\n\n")
	w("Each verdict compares the arms' mean top-1 over %s. %s\n\n", r.seedCount(), study.VerdictRule(o.seeds))
	for _, f := range r.Findings {
		w("- **%s: %s.** %s.\n", f.Claim, f.Verdict, f.Detail)
	}

	b.WriteString(study.ChecksMarkdown(r.Checks, r.Tally.Missing, r.Estimate, defaultsText(o)))

	w("\n## Commands\n\nThe study ran these vit-train commands (seed 0; the other seeds differ only in `seed=`, `--out` and `--from`), each followed by `vit-train eval` and `vit-train logits --split test` of its `last.safetensors`%s, and, for (b), `vit-train eval --img-size 28`:\n\n```sh\n", coreOr(o, "", " (the ResNet-20: logits only)"))
	for _, c := range r.Tally.Commands {
		w("%s\n", c)
	}
	w("```\n\nThe models' forward FLOPs:\n\n```sh\n")
	seen := map[string]bool{}
	for _, a := range plannedArms(o) {
		if cmd := a.infoArgs(); !seen[cmd] {
			seen[cmd] = true
			w("%s\n", cmd)
		}
	}
	w("```\n")
	return b.String()
}

// armTable is the arms' table in Markdown.
func (r *report) armTable() string {
	var b strings.Builder
	b.WriteString("| arm | px | seeds | top-1 | class head | distillation head | forward GFLOPs/image | training TFLOP | of (a)'s | CPU time | wall-clock |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	a := r.arm(keyScratch28)
	for _, x := range r.Arms {
		cls, dist := "–", "–"
		if x.Arm.Distilled() {
			cls, dist = study.PM(study.Summarize(x.Cls)), study.PM(study.Summarize(x.Dist))
		}
		frac := math.NaN()
		if a != nil {
			frac = x.TrainFLOPs / a.TrainFLOPs
		}
		fmt.Fprintf(&b, "| (%s) %s | %d | %d | %s | %s | %s | %.4f | %s | %s | %s | %s |\n", x.Arm.Letter, x.Arm.Label, x.Arm.Size, len(x.Seeds),
			study.PM(study.Summarize(x.Top1)), cls, dist, x.ForwardGFLOPs, tflop(x.TrainFLOPs), ratio(frac),
			study.AtLeast(study.Minutes(study.Mean(x.CPUS)), x.TimesAtLeast), study.AtLeast(study.Minutes(study.Mean(x.WallS)), x.TimesAtLeast))
	}
	b.WriteString(r.Tally.UnrecordedFootnote())
	return b.String()
}

// SummaryText is the part of the report printed at the end of --quick.
func (r *report) SummaryText() string {
	var b strings.Builder
	if !r.Opts.core {
		fmt.Fprintf(&b, "teacher: ResNet-20 %s%%\n\n", study.Num(r.Teacher.Top1))
	}
	b.WriteString(r.armTable() + "\n")
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

// defaultsText describes the default budget of o's mode (--core's has no
// teacher).
func defaultsText(o options) string {
	d := defaults()
	s := fmt.Sprintf("%s, %s from scratch, %s of fine-tuning", study.Plural(d.seeds, "seed"), study.Plural(d.epochs, "epoch"), study.Plural(d.finetuneEpochs, "epoch"))
	return s + coreOr(o, "", ", a teacher of "+study.Plural(d.teacherEpochs, "epoch"))
}

// coreOr is core when o is a --core study, else full.
func coreOr(o options, core, full string) string {
	if o.core {
		return core
	}
	return full
}
