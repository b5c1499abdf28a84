package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
)

// armResult gathers an arm's per-seed numbers (percentages; NaN where a
// head does not exist).
type armResult struct {
	Arm   arm
	Seeds []int
	// Cls, Dist and Avg are the test top-1 of the class head, the
	// distillation head and their average (the plain ViT's one head is its
	// class head and its average).
	Cls, Dist, Avg []float64
	// AgreeCNN and AgreeViT are the shares of test images on which the
	// student predicts the CNN's and the ViT teacher's class.
	AgreeCNN, AgreeViT []float64
	// TrainS is the training loop's time (Σ epoch_seconds), WallS the
	// vit-train processes' wall-clock time, evaluation included.
	TrainS, WallS []float64
	// WallAtLeast says that some of WallS are lower bounds (a run's first
	// process went unrecorded).
	WallAtLeast bool
	SecPerEpoch []float64
	// Curves are the validation top-1 per epoch, one slice per seed.
	Curves [][]float64
}

// teacherResult is a teacher's run.
type teacherResult struct {
	ID, Name, Model string
	Done            bool
	Params          string
	Epochs          int
	Top1            float64
	TrainS, WallS   float64
	Curve           []float64
}

// report is everything the study writes.
type report struct {
	Opts     options
	Arms     []armResult
	Teachers []teacherResult
	Findings []study.Finding
	Checks   []study.Check
	NPY      []string // the live-vs-file comparison, as sentences
	Estimate *study.Estimate
	Tally    study.Tally
}

// similarGapPt is how many points apart two teachers of similar accuracy
// may be.
const similarGapPt = 1.0

// teachers are the study's teachers, in the report's order.
var teachers = []struct{ id, name, model string }{
	{teacherCNN, "CNN", "resnet20, 28 px"},
	{teacherViT, "ViT", "vit_cifar_patch4_32 at 28 px, 1 channel"},
	{teacherCNNMatched, "CNN, fewer epochs", "resnet20, 28 px, stopped early"},
}

// analyse turns the finished runs of p into the report's numbers and
// verdicts.
func analyse(o options, p *study.Plan, res *study.Results) *report {
	rep := &report{Opts: o, Tally: study.NewTally(p, res)}
	pred := func(id string) []int {
		if rr, ok := res.Runs[id]; ok {
			return rr.Test.Argmax()
		}
		return nil
	}
	cnnPred, vitPred := pred(teacherCNN), pred(teacherViT)

	for _, t := range teachers {
		r, planned := p.ByID[t.id]
		if !planned {
			continue
		}
		tr := teacherResult{ID: t.id, Name: t.name, Model: t.model, Top1: math.NaN(), TrainS: math.NaN(), WallS: math.NaN(), Epochs: r.Epochs}
		if rr, ok := res.Runs[t.id]; ok {
			tr.Done, tr.Params, tr.Top1, tr.TrainS, tr.WallS = true, rr.Params, rr.Eval.Top1, rr.TrainS, rr.Done.WallS
			tr.Curve = study.Column(rr.Epochs, "val_top1")
		}
		rep.Teachers = append(rep.Teachers, tr)
	}

	for _, a := range plannedArms(o) {
		ar := armResult{Arm: a}
		for seed := 0; seed < o.seeds; seed++ {
			rr, ok := res.Runs[seedRunID(a, seed)]
			if !ok {
				continue
			}
			ar.Seeds = append(ar.Seeds, seed)
			cls, dist := rr.Eval.Top1, math.NaN()
			if rr.Eval.ClassHead != nil && rr.Eval.DistHead != nil {
				cls, dist = rr.Eval.ClassHead.Top1, rr.Eval.DistHead.Top1
			}
			ar.Cls = append(ar.Cls, cls)
			ar.Dist = append(ar.Dist, dist)
			ar.Avg = append(ar.Avg, rr.Eval.Top1)
			s := rr.Test.Argmax()
			ar.AgreeCNN = append(ar.AgreeCNN, study.Agreement(s, cnnPred))
			ar.AgreeViT = append(ar.AgreeViT, study.Agreement(s, vitPred))
			ar.TrainS = append(ar.TrainS, rr.TrainS)
			ar.WallS = append(ar.WallS, rr.Done.WallS)
			ar.WallAtLeast = ar.WallAtLeast || rr.Done.StartUnrecorded()
			ar.SecPerEpoch = append(ar.SecPerEpoch, rr.TrainS/float64(max(len(rr.Epochs), 1)))
			ar.Curves = append(ar.Curves, study.Column(rr.Epochs, "val_top1"))
		}
		rep.Arms = append(rep.Arms, ar)
	}

	rep.Checks = []study.Check{study.ConsistencyCheck(p, res)}
	npyFinding, npyText, npyCheck := compareLiveAndFile(rep, res)
	rep.NPY = npyText
	if npyCheck != nil {
		rep.Checks = append(rep.Checks, *npyCheck)
	}
	rep.Findings = findings(rep)
	if !o.core {
		rep.Findings = append(rep.Findings, npyFinding)
	}
	return rep
}

// compareLiveAndFile compares hard distillation from the live CNN with
// hard distillation from its logits in a .npy file: exactly, without
// augmentation (the check runs), and statistically, in the main recipe.
func compareLiveAndFile(rep *report, res *study.Results) (study.Finding, []string, *study.Check) {
	f := study.Finding{Claim: "Teacher logits read from a .npy file (vit-train logits) distil the same student as the live teacher", Verdict: study.NotMeasured}
	var text []string
	var chk *study.Check
	live, okL := res.Runs[checkLive]
	file, okF := res.Runs[checkNPY]
	if okL && okF {
		same := slices.Equal(live.Test.Data, file.Test.Data)
		lossL, lossF := study.Column(live.Epochs, "train_loss"), study.Column(file.Epochs, "train_loss")
		sameLoss := slices.Equal(lossL, lossF)
		maxDiff := 0.0
		if len(live.Test.Data) == len(file.Test.Data) {
			for i := range live.Test.Data {
				maxDiff = math.Max(maxDiff, math.Abs(float64(live.Test.Data[i]-file.Test.Data[i])))
			}
		} else {
			maxDiff = math.Inf(1)
		}
		agree := study.Agreement(live.Test.Argmax(), file.Test.Argmax())
		text = append(text, fmt.Sprintf("Without augmentation (aug.train=none, so that the live teacher sees the images vit-train logits saw), seed 0, %s: "+
			"the student distilled from the live ResNet-20 reaches %.2f%% and the one distilled from its .npy logits %.2f%%; "+
			"their per-epoch training losses are %s, their test logits %s (largest difference %.3g), and they predict the same class on %.2f%% of the test images.",
			study.Plural(live.Spec.Epochs, "epoch"), live.Eval.Top1, file.Eval.Top1, identical(sameLoss), identical(same), maxDiff, agree))
		chk = &study.Check{Name: "hard distillation from the .npy logits reproduces the live teacher bit for bit without augmentation", OK: same && sameLoss}
		chk.Detail = fmt.Sprintf("test logits %s, training losses %s", identical(same), identical(sameLoss))
		if same && sameLoss {
			f.Verdict = study.Holds
		} else {
			f.Verdict = study.DoesNotHold
		}
		f.Detail = fmt.Sprintf("without augmentation the two students are %s", map[bool]string{true: "identical (same training losses, bit-identical test logits)", false: fmt.Sprintf("not identical (largest test-logit difference %.3g, %.2f%% prediction agreement)", maxDiff, agree)}[same && sameLoss])
	}
	hard, npy := rep.arm("hard_cnn"), rep.arm("hard_npy")
	if hard != nil && npy != nil && len(hard.Seeds) > 0 && len(npy.Seeds) > 0 {
		d := study.Compare(npy.Seeds, npy.Avg, hard.Seeds, hard.Avg)
		s := fmt.Sprintf("With the main recipe (pad-crop + flip) the file holds the teacher's logits of the un-augmented images while the live teacher sees each augmented batch, so the two differ by design: "+
			".npy %s vs live %s (%s).", study.PM(study.Summarize(npy.Avg)), study.PM(study.Summarize(hard.Avg)), d)
		text = append(text, s)
		if f.Detail != "" {
			f.Detail += "; "
		}
		f.Detail += fmt.Sprintf("with augmentation, .npy − live = %s", d)
	}
	return f, text, chk
}

func identical(b bool) string {
	if b {
		return "identical"
	}
	return "different"
}

// arm returns the named arm's results.
func (r *report) arm(key string) *armResult {
	for i := range r.Arms {
		if r.Arms[i].Arm.Key == key {
			return &r.Arms[i]
		}
	}
	return nil
}

func (r *report) teacher(id string) *teacherResult {
	for i := range r.Teachers {
		if r.Teachers[i].ID == id {
			return &r.Teachers[i]
		}
	}
	return nil
}

// findings computes DeiT's claims from the arms' mean top-1 (both heads
// averaged, DeiT's inference rule).
func findings(r *report) []study.Finding {
	get := func(key string) *armResult {
		if a := r.arm(key); a != nil && len(a.Seeds) > 0 {
			return a
		}
		return &armResult{Arm: arm{Key: key}}
	}
	cmp := func(a, b *armResult) study.Diff { return study.Compare(a.Seeds, a.Avg, b.Seeds, b.Avg) }
	agreeCmp := func(a, b *armResult) study.Diff { return study.Compare(a.Seeds, a.AgreeCNN, b.Seeds, b.AgreeCNN) }
	avgOf := func(a *armResult) string { return study.PM(study.Summarize(a.Avg)) }
	label := func(key string) string { return studentArms[armIndex(key)].Label }

	hard, soft3, soft1 := get("hard_cnn"), get("soft_tau3_alpha0.1"), get("soft_tau1_alpha0.5")
	vit, noT := get("vit"), get("deit_no_teacher")
	var out []study.Finding

	out = append(out, study.Finding{
		Claim:   "Hard distillation beats soft distillation",
		Verdict: study.Verdict(cmp(hard, soft3), cmp(hard, soft1)),
		Detail: fmt.Sprintf("hard %s vs %s %s (%s) and %s %s (%s)", avgOf(hard),
			label(soft3.Arm.Key), avgOf(soft3), cmp(hard, soft3), label(soft1.Arm.Key), avgOf(soft1), cmp(hard, soft1)),
	})

	out = append(out, study.Finding{
		Claim:   "Distillation beats no distillation at equal epochs",
		Verdict: study.Verdict(cmp(hard, vit), cmp(hard, noT)),
		Detail: fmt.Sprintf("hard distillation from the CNN %s vs the plain ViT %s (%s) and the distilled architecture without a teacher %s (%s), all %s",
			avgOf(hard), avgOf(vit), cmp(hard, vit), avgOf(noT), cmp(hard, noT), study.Plural(r.Opts.epochs, "epoch")),
	})

	out = append(out, teacherTypeFinding(r, get))

	// The ensemble of the two heads, judged on hard distillation from the
	// CNN (DeiT's setting) and counted over every arm with a teacher.
	ens := study.Finding{Claim: "The two-head ensemble beats each head alone"}
	ens.Verdict = ensembleVerdict(hard)
	ens.Detail = fmt.Sprintf("hard, CNN teacher: both heads %s vs class head %s (%s) and distillation head %s (%s)",
		avgOf(hard), study.PM(study.Summarize(hard.Cls)), study.Compare(hard.Seeds, hard.Avg, hard.Seeds, hard.Cls),
		study.PM(study.Summarize(hard.Dist)), study.Compare(hard.Seeds, hard.Avg, hard.Seeds, hard.Dist))
	wins, n := 0, 0
	for _, a := range r.Arms {
		if a.Arm.Teacher == noTeacher || len(a.Seeds) == 0 {
			continue
		}
		n++
		if ensembleVerdict(&a) == study.Holds {
			wins++
		}
	}
	if n > 0 {
		ens.Detail += fmt.Sprintf("; the ensemble beats both heads, resolved by the seeds, in %d of the %d arms with a teacher", wins, n)
	}
	out = append(out, ens)

	out = append(out, study.Finding{
		Claim:   "Distillation makes the student agree more with its teacher",
		Verdict: study.Verdict(agreeCmp(hard, noT), agreeCmp(hard, vit)),
		Detail: fmt.Sprintf("agreement with the CNN: hard-distilled %s%% vs no teacher %s%% (%s) and plain ViT %s%% (%s)",
			study.PM(study.Summarize(hard.AgreeCNN)), study.PM(study.Summarize(noT.AgreeCNN)), agreeCmp(hard, noT),
			study.PM(study.Summarize(vit.AgreeCNN)), agreeCmp(hard, vit)),
	})
	return out
}

// ensembleVerdict judges "the two heads' average beats each head alone" on
// one arm's seeds.
func ensembleVerdict(a *armResult) string {
	return study.Verdict(study.Compare(a.Seeds, a.Avg, a.Seeds, a.Cls), study.Compare(a.Seeds, a.Avg, a.Seeds, a.Dist))
}

// teacherTypeFinding judges "a convnet teacher beats a transformer teacher"
// on hard distillation from the ViT and from the CNN teacher whose top-1 is
// closest to the ViT's (the early-stopped CNN when its arm ran), so that
// teacher type is compared at similar teacher accuracy where the runs allow
// it. The other CNN's arm is given too.
func teacherTypeFinding(r *report, get func(string) *armResult) study.Finding {
	type cnn struct {
		arm     *armResult
		teacher *teacherResult
		gap     float64 // teacher top-1, CNN − ViT; NaN if either is missing
	}
	hardViT, tv := get("hard_vit"), r.teacher(teacherViT)
	var cnns []cnn
	for _, c := range []cnn{{arm: get("hard_cnn_matched"), teacher: r.teacher(teacherCNNMatched)}, {arm: get("hard_cnn"), teacher: r.teacher(teacherCNN)}} {
		if len(c.arm.Seeds) == 0 {
			continue
		}
		c.gap = math.NaN()
		if c.teacher != nil && c.teacher.Done && tv != nil && tv.Done {
			c.gap = c.teacher.Top1 - tv.Top1
		}
		cnns = append(cnns, c)
	}
	// Closest first; a teacher without a top-1 goes last.
	distance := func(c cnn) float64 {
		if math.IsNaN(c.gap) {
			return math.Inf(1)
		}
		return math.Abs(c.gap)
	}
	slices.SortStableFunc(cnns, func(a, b cnn) int { return cmp.Compare(distance(a), distance(b)) })
	f := study.Finding{Claim: "A convnet teacher beats a transformer teacher", Verdict: study.NotMeasured,
		Detail: fmt.Sprintf("no arm distilled from a CNN; from the ViT %s", study.PM(study.Summarize(hardViT.Avg)))}
	for i, c := range cnns {
		d := study.Compare(c.arm.Seeds, c.arm.Avg, hardViT.Seeds, hardViT.Avg)
		text := fmt.Sprintf("%s: %s vs %s: %s (%s)",
			c.arm.Arm.Label, study.PM(study.Summarize(c.arm.Avg)), studentArms[armIndex("hard_vit")].Label, study.PM(study.Summarize(hardViT.Avg)), d)
		if !math.IsNaN(c.gap) {
			text += fmt.Sprintf("; teachers %.2f%% and %.2f%% (CNN − ViT %+.2f points, %s)", c.teacher.Top1, tv.Top1, c.gap,
				teacherGapReading(c.gap, d.Sign()))
		}
		if i == 0 {
			f.Verdict, f.Detail = study.Verdict(d), text
			continue
		}
		f.Detail += ". Beside it, " + text
	}
	if len(cnns) > 0 {
		f.Detail += "; each teacher is a single run, so the verdict is conditional on these teachers"
	}
	return f
}

// similarity says whether two teachers g points apart count as of similar
// accuracy.
func similarity(g float64) string {
	if math.Abs(g) <= similarGapPt {
		return fmt.Sprintf("within %.0f point: similar accuracy", similarGapPt)
	}
	return fmt.Sprintf("more than %.0f point apart", similarGapPt)
}

// teacherGapReading reads a teacher-type comparison whose teachers are g
// points apart (CNN − ViT) from the direction the seeds resolve the CNN
// student's difference in (study.Diff.Sign): between teachers of
// different accuracy, only a resolved win of the weaker teacher's student
// separates teacher type from teacher accuracy (DeiT's weaker RegNetY-4GF
// still beats its DeiT-B teacher); an unresolved difference names no
// winner.
func teacherGapReading(g float64, cnnSign int) string {
	switch {
	case math.Abs(g) <= similarGapPt:
		return similarity(g)
	case cnnSign == 0:
		return similarity(g) + "; the seeds do not resolve which student wins"
	case (g > 0) == (cnnSign > 0):
		return similarity(g) + "; the stronger teacher's student wins, so teacher type and teacher accuracy are confounded"
	}
	return similarity(g) + "; the weaker teacher's student wins, so teacher accuracy does not explain the difference"
}

// seedCount says over how many seeds the arms' numbers are averaged.
func (r *report) seedCount() string {
	return study.SeedCount(r.Opts.seeds, r.Arms, func(a armResult) []int { return a.Seeds })
}
