package main

import (
	"fmt"
	"math"

	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
)

// armResult gathers an arm's per-seed numbers.
type armResult struct {
	Arm   arm
	Seeds []int
	// Top1 is the test top-1 (%) at the arm's size: both heads averaged
	// for the distilled architecture (DeiT's inference rule), whose class
	// and distillation heads are Cls and Dist (NaN for the plain ViT).
	Top1, Cls, Dist []float64
	// ForwardGFLOPs is the forward GFLOPs per image of the arm's model at
	// its size.
	ForwardGFLOPs float64
	// TrainFLOPs is one seed's training compute, 3 × forward FLOPs ×
	// training images seen, the arm it starts from included; OwnFLOPs
	// leaves that arm out. An evaluation-only arm has the FLOPs of the arm
	// it evaluates.
	TrainFLOPs, OwnFLOPs float64
	// CPUS and WallS are, per seed, the CPU and wall-clock seconds of the
	// vit-train train and finetune processes of the arm and of the arm it
	// starts from; TimesAtLeast says that some are lower bounds (a run's
	// first process went unrecorded).
	CPUS, WallS  []float64
	TimesAtLeast bool
}

// teacherResult is the ResNet-20 teacher's run.
type teacherResult struct {
	Done         bool
	Epochs       int
	Params       string
	Top1         float64
	CPUS, WallS  float64
	TimesAtLeast bool // CPUS and WallS are lower bounds
	TrainSeconds float64
}

// report is everything the study writes.
type report struct {
	Opts     options
	Arms     []armResult
	Teacher  teacherResult
	Findings []study.Finding
	Checks   []study.Check
	Estimate *study.Estimate
	Tally    study.Tally
}

// analyse turns the finished runs of p into the report's numbers and
// verdicts.
func analyse(o options, p *study.Plan, res *study.Results) (*report, error) {
	rep := &report{Opts: o, Tally: study.NewTally(p, res)}
	rep.Teacher = teacherResult{Epochs: p.ByID[teacherCNN].Epochs, Top1: math.NaN(), CPUS: math.NaN(), WallS: math.NaN()}
	if rr, ok := res.Runs[teacherCNN]; ok {
		rep.Teacher = teacherResult{Done: true, Epochs: rr.Spec.Epochs, Params: rr.Params, Top1: rr.Eval.Top1,
			CPUS: rr.Done.CPUS, WallS: rr.Done.WallS, TimesAtLeast: rr.Done.StartUnrecorded(), TrainSeconds: rr.TrainS}
	}
	for _, a := range plannedArms(o) {
		ar, err := armNumbers(o, a, p, res)
		if err != nil {
			return nil, err
		}
		rep.Arms = append(rep.Arms, ar)
	}
	rep.Checks = []study.Check{study.ConsistencyCheck(p, res)}
	rep.Findings = findings(rep)
	return rep, nil
}

// armNumbers reads arm a's finished seeds and computes its compute.
func armNumbers(o options, a arm, p *study.Plan, res *study.Results) (armResult, error) {
	ar := armResult{Arm: a}
	fwd, err := a.forwardFLOPs()
	if err != nil {
		return ar, err
	}
	ar.ForwardGFLOPs = fwd / 1e9
	ar.TrainFLOPs, ar.OwnFLOPs, err = trainFLOPs(a, p, 0)
	if err != nil {
		return ar, err
	}
	for seed := 0; seed < o.seeds; seed++ {
		rr, ok := res.Runs[seedRunID(a, seed)]
		if !ok {
			continue
		}
		ev := rr.Eval
		if a.EvalOf != "" {
			if ev, ok = rr.Evals[eval28.Name]; !ok {
				continue
			}
		}
		cls, dist := ev.Top1, math.NaN()
		if ev.ClassHead != nil && ev.DistHead != nil {
			cls, dist = ev.ClassHead.Top1, ev.DistHead.Top1
		}
		cpu, wall, lower := seedTime(a, seed, res)
		ar.TimesAtLeast = ar.TimesAtLeast || lower
		ar.Seeds = append(ar.Seeds, seed)
		ar.Top1, ar.Cls, ar.Dist = append(ar.Top1, ev.Top1), append(ar.Cls, cls), append(ar.Dist, dist)
		ar.CPUS, ar.WallS = append(ar.CPUS, cpu), append(ar.WallS, wall)
	}
	return ar, nil
}

// trainFLOPs is the training compute of one seed of arm a in the plan p:
// 3 × forward FLOPs per image (the forward pass, and a backward pass of
// about twice its cost) × epochs × training images, plus that of the arm
// it starts from (total); own leaves the latter out. seed picks the run
// whose epochs and images are read (every seed has the same).
func trainFLOPs(a arm, p *study.Plan, seed int) (total, own float64, err error) {
	if a.EvalOf != "" {
		return trainFLOPsOf(armByKey(a.EvalOf), p, seed, 0)
	}
	return trainFLOPsOf(a, p, seed, 0)
}

func trainFLOPsOf(a arm, p *study.Plan, seed, depth int) (total, own float64, err error) {
	r, ok := p.ByID[seedRunID(a, seed)]
	if !ok || depth > len(arms) {
		return math.NaN(), math.NaN(), nil
	}
	fwd, err := a.forwardFLOPs()
	if err != nil {
		return 0, 0, err
	}
	own = 3 * fwd * float64(r.Epochs) * float64(r.TrainImages)
	total = own
	if a.From != "" {
		parent, _, err := trainFLOPsOf(armByKey(a.From), p, seed, depth+1)
		if err != nil {
			return 0, 0, err
		}
		total += parent
	}
	return total, own, nil
}

// seedTime is the CPU and wall-clock seconds of the training processes of
// arm a's seed and of the arms it starts from (NaN when one is missing);
// lower says that they are lower bounds.
func seedTime(a arm, seed int, res *study.Results) (cpu, wall float64, lower bool) {
	if a.EvalOf != "" {
		a = armByKey(a.EvalOf)
	}
	for {
		rr, ok := res.Runs[seedRunID(a, seed)]
		if !ok {
			return math.NaN(), math.NaN(), false
		}
		cpu += rr.Done.CPUS
		wall += rr.Done.WallS
		lower = lower || rr.Done.StartUnrecorded()
		if a.From == "" {
			return cpu, wall, lower
		}
		a = armByKey(a.From)
	}
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

// reachVerdict judges "the fine-tuned model reaches the one trained at
// the native size from scratch within margin points, at a fraction of its
// compute" from ftMinusScratch, the fine-tuned model's top-1 less the
// other's: the claim that ft − scratch + margin is positive (study.Verdict
// of marginDiff), and DoesNotHold whatever the accuracy when fraction is
// not below 1.
func reachVerdict(ftMinusScratch study.Diff, margin, fraction float64) string {
	switch {
	case math.IsNaN(fraction):
		return study.NotMeasured
	case fraction >= 1 && !math.IsNaN(ftMinusScratch.D):
		return study.DoesNotHold
	}
	return study.Verdict(marginDiff(ftMinusScratch, margin))
}

// marginDiff is ft − scratch + margin, the difference that "within margin
// points" rests on: its standard error and degrees of freedom are
// ft − scratch's.
func marginDiff(ftMinusScratch study.Diff, margin float64) study.Diff {
	ftMinusScratch.D += margin
	return ftMinusScratch
}

// findings computes the study's claims from the arms' mean top-1.
func findings(r *report) []study.Finding {
	get := func(key string) *armResult {
		if a := r.arm(key); a != nil {
			return a
		}
		return &armResult{Arm: armByKey(key), TrainFLOPs: math.NaN()}
	}
	pm := func(a *armResult) string {
		return fmt.Sprintf("(%s) %s", a.Arm.Letter, study.PM(study.Summarize(a.Top1)))
	}
	cmp := func(a, b *armResult) study.Diff { return study.Compare(a.Seeds, a.Top1, b.Seeds, b.Top1) }
	a, b, c, d, e := get(keyScratch28), get(keyScratch14), get(keyEval28), get(keyFinetune28), get(keyFinetune14)
	dNo, f := get(keyDistilledFT), get(keyDistilledHrd)
	margin := r.Opts.margin
	var out []study.Finding

	fraction := d.TrainFLOPs / a.TrainFLOPs
	cpuFraction := study.Mean(d.CPUS) / study.Mean(a.CPUS)
	reach := study.Finding{
		Claim:   fmt.Sprintf("Training at 14 px and fine-tuning at 28 px (d) reaches training at 28 px from scratch (a) within %s points, at a fraction of its compute", study.FmtFloat(margin)),
		Verdict: reachVerdict(cmp(d, a), margin, fraction),
	}
	reach.Detail = fmt.Sprintf("%s vs %s (%s); against the %s-point margin, (d) − (a) + %s: %s; at %s of (a)'s training FLOPs (%s vs %s TFLOP per seed) and %s of its CPU time",
		pm(d), pm(a), cmp(d, a), study.FmtFloat(margin), study.FmtFloat(margin), marginDiff(cmp(d, a), margin),
		ratio(fraction), tflop(d.TrainFLOPs), tflop(a.TrainFLOPs), boundedRatio(cpuFraction, d.TimesAtLeast, a.TimesAtLeast))
	out = append(out, reach)

	out = append(out, study.Finding{
		Claim:   "The gain is the resolution, not the extra steps: fine-tuning at 28 px (d) beats fine-tuning for the same steps at 14 px (e)",
		Verdict: study.Verdict(cmp(d, e)),
		Detail:  fmt.Sprintf("%s vs %s (%s); (d)'s training FLOPs are %s times (e)'s", pm(d), pm(e), cmp(d, e), ratio(d.TrainFLOPs/e.TrainFLOPs)),
	})
	out = append(out, study.Finding{
		Claim:   "Fine-tuning at 28 px (d) improves on the 14 px model (b)",
		Verdict: study.Verdict(cmp(d, b)),
		Detail:  fmt.Sprintf("%s vs %s (%s)", pm(d), pm(b), cmp(d, b)),
	})
	out = append(out, study.Finding{
		Claim:   "Without fine-tuning, the 14 px model loses accuracy at 28 px (c), the train-test resolution discrepancy (FixRes)",
		Verdict: study.Verdict(cmp(b, c)),
		Detail:  fmt.Sprintf("%s at 14 px vs %s at 28 px, position embeddings resampled (%s)", pm(b), pm(c), cmp(b, c)),
	})
	if r.Opts.core {
		return out
	}
	out = append(out, study.Finding{
		Claim:   "Hard distillation from a 28 px CNN during the fine-tune (f) beats the same fine-tune without a teacher (d′)",
		Verdict: study.Verdict(cmp(f, dNo)),
		Detail:  fmt.Sprintf("%s vs %s (%s); the ResNet-20 teacher: %s%%", pm(f), pm(dNo), cmp(f, dNo), study.Num(r.Teacher.Top1)),
	})
	return out
}

// tflop writes FLOPs in TFLOP.
func tflop(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.3g", v/1e12)
}

// boundedRatio writes a ratio whose numerator or denominator may be a
// lower bound: "≥ 0.48" (numerator), "≤ 0.48" (denominator), "–" (both).
func boundedRatio(v float64, numAtLeast, denAtLeast bool) string {
	switch {
	case numAtLeast && denAtLeast:
		return "–"
	case numAtLeast:
		return "≥ " + ratio(v)
	case denAtLeast:
		return "≤ " + ratio(v)
	}
	return ratio(v)
}

// ratio writes a ratio with two decimals ("–" when unknown).
func ratio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return fmt.Sprintf("%.2f", v)
}

// seedCount says over how many seeds the arms' numbers are averaged.
func (r *report) seedCount() string {
	return study.SeedCount(r.Opts.seeds, r.Arms, func(a armResult) []int { return a.Seeds })
}
