package main

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	// student predicts the CNN's (the 56 px CNN's for the fine-tuning arm)
	// and the ViT teacher's class.
	AgreeCNN, AgreeViT []float64
	// TrainS is the training loop's time (Σ epoch_seconds), WallS the
	// vit-train processes' wall-clock time, evaluation included.
	TrainS, WallS []float64
	SecPerEpoch   []float64
	// Curves are the validation top-1 per epoch, one slice per seed.
	Curves [][]float64
	// ParentAvg is, for the fine-tuning arm, the 28 px start's top-1.
	ParentAvg []float64
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

// finding is one of the study's claims with its verdict from the numbers.
type finding struct {
	Claim   string
	Verdict string // holds, does not hold, not measured
	Detail  string
}

// check is a consistency check of the pipeline.
type check struct {
	Name   string
	OK     bool
	Detail string
}

// report is everything the study writes.
type report struct {
	Opts     options
	Arms     []armResult
	Teachers []teacherResult
	Findings []finding
	Checks   []check
	NPY      []string // the live-vs-file comparison, as sentences
	Estimate *estimate
	Commands []string
	Build    string
	Commit   string
	Binaries []string // the distinct binaries' SHA-256, in run order
	// WallS and CPUS are the finished runs' vit-train processes, training,
	// evaluation and logits together.
	WallS, CPUS float64
	missing     []string
}

const (
	holds        = "holds"
	doesNotHold  = "does not hold"
	notMeasured  = "not measured"
	checkTolPct  = 1e-6
	similarGapPt = 1.0 // teachers within this many points count as of similar accuracy
)

// analyse turns the finished runs into the report's numbers and verdicts.
func analyse(o options, p *plan, res *results) *report {
	rep := &report{Opts: o}
	for _, r := range p.runs {
		rr, ok := res.Runs[r.ID]
		if !ok {
			rep.missing = append(rep.missing, r.ID)
			continue
		}
		if rep.Build == "" {
			rep.Build, rep.Commit = rr.Done.Build, rr.Done.Commit
		}
		rep.WallS += rr.Done.WallS
		rep.CPUS += rr.Done.CPUS
		for _, a := range rr.Post {
			rep.WallS += a.WallS
			rep.CPUS += a.CPUS
		}
		if !slices.Contains(rep.Binaries, rr.Done.Binary) {
			rep.Binaries = append(rep.Binaries, rr.Done.Binary)
		}
		if r.Seed == 0 {
			rep.Commands = append(rep.Commands, "vit-train "+quoteArgs(relArgs(r.Args)))
		}
	}
	pred := func(id string) []int {
		if rr, ok := res.Runs[id]; ok {
			return rr.Test.argmax()
		}
		return nil
	}
	cnnPred, vitPred, cnn56Pred := pred(teacherCNN), pred(teacherViT), pred(teacherCNN56)

	for _, t := range []struct{ id, name, model string }{
		{teacherCNN, "CNN", "resnet20, 28 px"},
		{teacherViT, "ViT", "vit_cifar_patch4_32 at 28 px, 1 channel"},
		{teacherCNNMatched, "CNN, fewer epochs", "resnet20, 28 px, stopped early"},
		{teacherCNN56, "CNN at 56 px", "resnet20, 56 px"},
	} {
		tr := teacherResult{ID: t.id, Name: t.name, Model: t.model, Top1: math.NaN(), TrainS: math.NaN(), WallS: math.NaN(), Epochs: p.byID[t.id].Epochs}
		if rr, ok := res.Runs[t.id]; ok {
			tr.Done, tr.Params, tr.Top1, tr.TrainS, tr.WallS = true, rr.Params, rr.Eval.Top1, rr.TrainS, rr.Done.WallS
			tr.Curve = column(rr.Epochs, "val_top1")
		}
		rep.Teachers = append(rep.Teachers, tr)
	}

	for _, a := range allArms() {
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
			s := rr.Test.argmax()
			if a.ImageSize != 0 {
				ar.AgreeCNN = append(ar.AgreeCNN, agreement(s, cnn56Pred))
			} else {
				ar.AgreeCNN = append(ar.AgreeCNN, agreement(s, cnnPred))
			}
			ar.AgreeViT = append(ar.AgreeViT, agreement(s, vitPred))
			ar.TrainS = append(ar.TrainS, rr.TrainS)
			ar.WallS = append(ar.WallS, rr.Done.WallS)
			ar.SecPerEpoch = append(ar.SecPerEpoch, rr.TrainS/float64(max(len(rr.Epochs), 1)))
			ar.Curves = append(ar.Curves, column(rr.Epochs, "val_top1"))
			if a.FromArm != "" {
				parent := math.NaN()
				if pr, ok := res.Runs[seedRunID(studentArms[armIndex(a.FromArm)], seed)]; ok {
					parent = pr.Eval.Top1
				}
				ar.ParentAvg = append(ar.ParentAvg, parent)
			}
		}
		rep.Arms = append(rep.Arms, ar)
	}

	rep.Checks = consistencyChecks(p, res)
	npyFinding, npyText, npyCheck := compareLiveAndFile(rep, res)
	rep.NPY = npyText
	if npyCheck != nil {
		rep.Checks = append(rep.Checks, *npyCheck)
	}
	rep.Findings = findings(rep)
	rep.Findings = append(rep.Findings, npyFinding)
	return rep
}

// relArgs writes the paths in args relative to the current folder when
// they are inside it.
func relArgs(args []string) []string {
	wd, err := os.Getwd()
	if err != nil {
		return args
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, wd+string(filepath.Separator), "")
	}
	return out
}

// relPath is path relative to the current folder when it is inside it.
func relPath(path string) string {
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return path
}

// column is one metric of a metrics log, row by row.
func column(rows []map[string]float64, name string) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		v, ok := r[name]
		if !ok {
			v = math.NaN()
		}
		out[i] = v
	}
	return out
}

// consistencyChecks compares, for each run, the top-1 of its test logits
// (vit-train logits) with its evaluation (vit-train eval) and the last
// epoch's validation top-1 (the training run's own evaluation).
func consistencyChecks(p *plan, res *results) []check {
	var bad []string
	n := 0
	for _, r := range p.runs {
		rr, ok := res.Runs[r.ID]
		if !ok {
			continue
		}
		n++
		fromLogits := accuracy(rr.Test.argmax(), res.Labels)
		lastVal := math.NaN()
		if len(rr.Epochs) > 0 {
			lastVal = rr.Epochs[len(rr.Epochs)-1]["val_top1"]
		}
		switch {
		case rr.Test.N != rr.Eval.N:
			bad = append(bad, fmt.Sprintf("%s: %d test logits, %d evaluated images", r.ID, rr.Test.N, rr.Eval.N))
		case !(math.Abs(fromLogits-rr.Eval.Top1) <= checkTolPct):
			bad = append(bad, fmt.Sprintf("%s: top-1 %.4f%% from the test logits, %.4f%% from vit-train eval", r.ID, fromLogits, rr.Eval.Top1))
		case !(math.Abs(lastVal-rr.Eval.Top1) <= checkTolPct):
			bad = append(bad, fmt.Sprintf("%s: top-1 %.4f%% in the last epoch's log, %.4f%% from vit-train eval of last.safetensors", r.ID, lastVal, rr.Eval.Top1))
		case len(rr.Epochs) != r.Epochs:
			bad = append(bad, fmt.Sprintf("%s: epochs.csv has %d epochs, the run %d", r.ID, len(rr.Epochs), r.Epochs))
		}
	}
	c := check{Name: "each run's test top-1 is the same from its logits (vit-train logits), its evaluation (vit-train eval) and its last epoch's log; epochs.csv has every epoch", OK: len(bad) == 0}
	if c.OK {
		c.Detail = fmt.Sprintf("%d runs agree", n)
	} else {
		c.Detail = strings.Join(bad, "; ")
	}
	return []check{c}
}

// compareLiveAndFile compares hard distillation from the live CNN with
// hard distillation from its logits in a .npy file: exactly, without
// augmentation (the check runs), and statistically, in the main recipe.
func compareLiveAndFile(rep *report, res *results) (finding, []string, *check) {
	f := finding{Claim: "Teacher logits read from a .npy file (vit-train logits) distil the same student as the live teacher", Verdict: notMeasured}
	var text []string
	var chk *check
	live, okL := res.Runs[checkLive]
	file, okF := res.Runs[checkNPY]
	if okL && okF {
		same := slices.Equal(live.Test.Data, file.Test.Data)
		lossL, lossF := column(live.Epochs, "train_loss"), column(file.Epochs, "train_loss")
		sameLoss := slices.Equal(lossL, lossF)
		maxDiff := 0.0
		if len(live.Test.Data) == len(file.Test.Data) {
			for i := range live.Test.Data {
				maxDiff = math.Max(maxDiff, math.Abs(float64(live.Test.Data[i]-file.Test.Data[i])))
			}
		} else {
			maxDiff = math.Inf(1)
		}
		agree := agreement(live.Test.argmax(), file.Test.argmax())
		text = append(text, fmt.Sprintf("Without augmentation (aug.train=none, so that the live teacher sees the images vit-train logits saw), seed 0, %s: "+
			"the student distilled from the live ResNet-20 reaches %.2f%% and the one distilled from its .npy logits %.2f%%; "+
			"their per-epoch training losses are %s, their test logits %s (largest difference %.3g), and they predict the same class on %.2f%% of the test images.",
			plural(live.Spec.Epochs, "epoch"), live.Eval.Top1, file.Eval.Top1, identical(sameLoss), identical(same), maxDiff, agree))
		chk = &check{Name: "hard distillation from the .npy logits reproduces the live teacher bit for bit without augmentation", OK: same && sameLoss}
		chk.Detail = fmt.Sprintf("test logits %s, training losses %s", identical(same), identical(sameLoss))
		if same && sameLoss {
			f.Verdict = holds
		} else {
			f.Verdict = doesNotHold
		}
		f.Detail = fmt.Sprintf("without augmentation the two students are %s", map[bool]string{true: "identical (same training losses, bit-identical test logits)", false: fmt.Sprintf("not identical (largest test-logit difference %.3g, %.2f%% prediction agreement)", maxDiff, agree)}[same && sameLoss])
	}
	hard, npy := rep.arm("hard_cnn"), rep.arm("hard_npy")
	if hard != nil && npy != nil && len(hard.Seeds) > 0 && len(npy.Seeds) > 0 {
		d := compare(npy.Seeds, npy.Avg, hard.Seeds, hard.Avg)
		s := fmt.Sprintf("With the main recipe (pad-crop + flip) the file holds the teacher's logits of the un-augmented images while the live teacher sees each augmented batch, so the two differ by design: "+
			".npy %s vs live %s (%s).", pm(summarize(npy.Avg)), pm(summarize(hard.Avg)), d)
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

// diff is the difference of two arms' means with its standard error:
// paired over seeds when both arms have the same seeds, else Welch's.
type diff struct {
	D, SE  float64
	Paired bool
	N      int
}

// compare is mean(a) − mean(b) with its standard error.
func compare(seedsA []int, a []float64, seedsB []int, b []float64) diff {
	d := diff{D: summarize(a).Mean - summarize(b).Mean, SE: math.NaN()}
	if slices.Equal(seedsA, seedsB) && len(a) == len(b) {
		deltas := make([]float64, len(a))
		for i := range a {
			deltas[i] = a[i] - b[i]
		}
		s := summarize(deltas)
		d.Paired, d.N = true, s.N
		if s.N > 1 {
			d.SE = s.Std / math.Sqrt(float64(s.N))
		}
		return d
	}
	sa, sb := summarize(a), summarize(b)
	d.N = min(sa.N, sb.N)
	if sa.N > 1 && sb.N > 1 {
		d.SE = math.Sqrt(sa.Std*sa.Std/float64(sa.N) + sb.Std*sb.Std/float64(sb.N))
	}
	return d
}

// Resolved says whether the difference exceeds twice its standard error.
func (d diff) Resolved() bool { return !math.IsNaN(d.SE) && math.Abs(d.D) > 2*d.SE }

func (d diff) String() string {
	if math.IsNaN(d.D) {
		return "not measured"
	}
	s := fmt.Sprintf("Δ %+.2f points", d.D)
	switch {
	case math.IsNaN(d.SE):
		return s + ", one seed: no error estimate"
	case d.Resolved():
		kind := "unpaired"
		if d.Paired {
			kind = "paired over seeds"
		}
		return s + fmt.Sprintf(", standard error %.2f (%s): more than 2 SE", d.SE, kind)
	}
	return s + fmt.Sprintf(", standard error %.2f: within 2 SE, not resolved by %d seeds", d.SE, d.N)
}

// pm writes mean ± std in percent ("–" when not measured).
func pm(s stats) string {
	switch {
	case s.N == 0 || math.IsNaN(s.Mean):
		return "–"
	case s.N == 1 || math.IsNaN(s.Std):
		return fmt.Sprintf("%.2f", s.Mean)
	}
	return fmt.Sprintf("%.2f ± %.2f", s.Mean, s.Std)
}

// verdict is holds when better > each of others (means), does not hold
// when not, not measured when any is missing.
func verdict(better float64, others ...float64) string {
	if math.IsNaN(better) {
		return notMeasured
	}
	for _, o := range others {
		if math.IsNaN(o) {
			return notMeasured
		}
	}
	for _, o := range others {
		if !(better > o) {
			return doesNotHold
		}
	}
	return holds
}

// findings computes DeiT's claims from the arms' mean top-1 (both heads
// averaged, DeiT's inference rule).
func findings(r *report) []finding {
	get := func(key string) *armResult {
		if a := r.arm(key); a != nil && len(a.Seeds) > 0 {
			return a
		}
		return &armResult{Arm: arm{Key: key}}
	}
	mean := func(xs []float64) float64 { return summarize(xs).Mean }
	cmp := func(a, b *armResult) diff { return compare(a.Seeds, a.Avg, b.Seeds, b.Avg) }
	avgOf := func(a *armResult) string { return pm(summarize(a.Avg)) }
	label := func(key string) string { return studentArms[armIndex(key)].Label }

	hard, soft3, soft1 := get("hard_cnn"), get("soft_tau3_alpha0.1"), get("soft_tau1_alpha0.5")
	vit, noT := get("vit"), get("deit_no_teacher")
	var out []finding

	out = append(out, finding{
		Claim:   "Hard distillation beats soft distillation",
		Verdict: verdict(mean(hard.Avg), mean(soft3.Avg), mean(soft1.Avg)),
		Detail: fmt.Sprintf("hard %s vs %s %s (%s) and %s %s (%s)", avgOf(hard),
			label(soft3.Arm.Key), avgOf(soft3), cmp(hard, soft3), label(soft1.Arm.Key), avgOf(soft1), cmp(hard, soft1)),
	})

	out = append(out, finding{
		Claim:   "Distillation beats no distillation at equal epochs",
		Verdict: verdict(mean(hard.Avg), mean(vit.Avg), mean(noT.Avg)),
		Detail: fmt.Sprintf("hard distillation from the CNN %s vs the plain ViT %s (%s) and the distilled architecture without a teacher %s (%s), all %s",
			avgOf(hard), avgOf(vit), cmp(hard, vit), avgOf(noT), cmp(hard, noT), plural(r.Opts.epochs, "epoch")),
	})

	out = append(out, teacherTypeFinding(r, get))

	// The ensemble of the two heads, judged on hard distillation from the
	// CNN (DeiT's setting) and counted over every arm with a teacher.
	ens := finding{Claim: "The two-head ensemble beats each head alone"}
	ens.Verdict = verdict(mean(hard.Avg), mean(hard.Cls), mean(hard.Dist))
	ens.Detail = fmt.Sprintf("hard, CNN teacher: both heads %s vs class head %s and distillation head %s",
		avgOf(hard), pm(summarize(hard.Cls)), pm(summarize(hard.Dist)))
	wins, n := 0, 0
	for _, a := range r.Arms {
		if a.Arm.Teacher == noTeacher || len(a.Seeds) == 0 {
			continue
		}
		n++
		if verdict(summarize(a.Avg).Mean, summarize(a.Cls).Mean, summarize(a.Dist).Mean) == holds {
			wins++
		}
	}
	if n > 0 {
		ens.Detail += fmt.Sprintf("; the ensemble is best in %d of the %d arms with a teacher", wins, n)
	}
	out = append(out, ens)

	out = append(out, finding{
		Claim:   "Distillation makes the student agree more with its teacher",
		Verdict: verdict(mean(hard.AgreeCNN), mean(noT.AgreeCNN), mean(vit.AgreeCNN)),
		Detail: fmt.Sprintf("agreement with the CNN: hard-distilled %s%% vs no teacher %s%% and plain ViT %s%%",
			pm(summarize(hard.AgreeCNN)), pm(summarize(noT.AgreeCNN)), pm(summarize(vit.AgreeCNN))),
	})

	ft := get(finetuneArm.Key)
	out = append(out, finding{
		Claim:   "Fine-tuning at 56 px with distillation improves on the 28 px student",
		Verdict: verdict(mean(ft.Avg), mean(ft.ParentAvg)),
		Detail: fmt.Sprintf("56 px %s vs its 28 px start %s (%s)", avgOf(ft), pm(summarize(ft.ParentAvg)),
			compare(ft.Seeds, ft.Avg, ft.Seeds, ft.ParentAvg)),
	})
	return out
}

// teacherTypeFinding judges "a convnet teacher beats a transformer teacher"
// on hard distillation from the ViT and from the CNN teacher whose top-1 is
// closest to the ViT's (the early-stopped CNN when its arm ran), so that
// teacher type is compared at similar teacher accuracy where the runs allow
// it. The other CNN's arm is given too.
func teacherTypeFinding(r *report, get func(string) *armResult) finding {
	type cnn struct {
		arm     *armResult
		teacher *teacherResult
		gap     float64 // teacher top-1, CNN − ViT; NaN if either is missing
	}
	hardViT, tv := get("hard_vit"), r.teacher(teacherViT)
	vitMean := summarize(hardViT.Avg).Mean
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
	f := finding{Claim: "A convnet teacher beats a transformer teacher", Verdict: notMeasured,
		Detail: fmt.Sprintf("no arm distilled from a CNN; from the ViT %s", pm(summarize(hardViT.Avg)))}
	for i, c := range cnns {
		mean := summarize(c.arm.Avg).Mean
		text := fmt.Sprintf("%s: %s vs %s: %s (%s)",
			c.arm.Arm.Label, pm(summarize(c.arm.Avg)), studentArms[armIndex("hard_vit")].Label, pm(summarize(hardViT.Avg)),
			compare(c.arm.Seeds, c.arm.Avg, hardViT.Seeds, hardViT.Avg))
		if !math.IsNaN(c.gap) {
			text += fmt.Sprintf("; teachers %.2f%% and %.2f%% (CNN − ViT %+.2f points, %s)", c.teacher.Top1, tv.Top1, c.gap,
				teacherGapReading(c.gap, mean > vitMean))
		}
		if i == 0 {
			f.Verdict, f.Detail = verdict(mean, vitMean), text
			continue
		}
		f.Detail += ". Beside it, " + text
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
// points apart (CNN − ViT) and whose CNN student won or not: between
// teachers of different accuracy, only a win of the weaker teacher's
// student separates teacher type from teacher accuracy (DeiT's weaker
// RegNetY-4GF still beats its DeiT-B teacher).
func teacherGapReading(g float64, cnnWins bool) string {
	switch {
	case math.Abs(g) <= similarGapPt:
		return similarity(g)
	case (g > 0) == cnnWins:
		return similarity(g) + "; the stronger teacher's student wins, so teacher type and teacher accuracy are confounded"
	}
	return similarity(g) + "; the weaker teacher's student wins, so teacher accuracy does not explain the difference"
}
