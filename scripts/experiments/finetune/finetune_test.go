package main

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
	"github.com/vit-train/vit-train/train"
)

func testOptions(t *testing.T, seeds int) options {
	o := defaults()
	o.seeds = seeds
	o.Work = t.TempDir()
	o.Data = "/data"
	return o
}

// sets returns the --set values of args, and the --config file.
func sets(args []string) (config string, kv map[string]string, list []string) {
	kv = map[string]string{}
	for i := 0; i < len(args)-1; i++ {
		switch args[i] {
		case "--set":
			k, v, _ := strings.Cut(args[i+1], "=")
			kv[k] = v
			list = append(list, args[i+1])
		case "--config":
			config = args[i+1]
		}
	}
	return config, kv, list
}

// flagValue is the value after flag in args ("" when absent).
func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

func TestPlanRunsEveryArmPerSeed(t *testing.T) {
	o := testOptions(t, 3)
	p := newPlan(o, filepath.Join(o.Work, "configs"))
	// The teacher, then 7 runs per seed ((c) is an evaluation of (b)).
	if want := 1 + 3*7; len(p.Runs) != want {
		t.Fatalf("%d runs, want %d", len(p.Runs), want)
	}
	if p.Runs[0].ID != teacherCNN || p.Runs[0].Evals != nil || p.Runs[0].Epochs != o.teacherEpochs {
		t.Errorf("first run %+v, want the ResNet-20 teacher of %d epochs, without vit-train eval", p.Runs[0], o.teacherEpochs)
	}
	pos := map[string]int{}
	for i, r := range p.Runs {
		pos[r.ID] = i
	}
	for seed := 0; seed < 3; seed++ {
		for _, a := range arms {
			r, ok := p.ByID[seedRunID(a, seed)]
			if !ok {
				t.Fatalf("no run of %s seed %d", a.Key, seed)
			}
			_, kv, _ := sets(r.Args)
			if kv["seed"] != strings.TrimPrefix(filepath.Base(r.ID), "seed") || kv["data.root"] != "/data" || kv["progress"] != "false" {
				t.Errorf("%s: seed %q, data.root %q, progress %q", r.ID, kv["seed"], kv["data.root"], kv["progress"])
			}
			switch {
			case a.EvalOf != "":
				if !slices.ContainsFunc(r.Evals, func(e study.Eval) bool { return slices.Equal(e.Args, []string{"--img-size", "28"}) }) {
					t.Errorf("(%s): run %s has no evaluation at 28 px: %+v", a.Letter, r.ID, r.Evals)
				}
			case a.From == "":
				if r.Args[0] != "train" || kv["model.name"] != a.Model || kv["model.patch_size"] != "2" || kv["model.img_size"] != map[int]string{14: "14", 28: "28"}[a.Size] || r.Epochs != o.epochs {
					t.Errorf("(%s): %v", a.Letter, r.Args)
				}
			default:
				parent := p.ByID[seedRunID(armByKey(a.From), seed)]
				if r.Args[0] != "finetune" || flagValue(r.Args, "--from") != parent.Last() || flagValue(r.Args, "--img-size") != map[int]string{14: "14", 28: "28"}[a.Size] || r.Epochs != o.finetuneEpochs {
					t.Errorf("(%s): %v", a.Letter, r.Args)
				}
				if pos[r.ID] < pos[parent.ID] {
					t.Errorf("(%s) runs before the run it starts from", a.Letter)
				}
				if (kv["distill.teacher"] == p.ByID[teacherCNN].Last() && kv["distill.type"] == "hard") != a.Teacher {
					t.Errorf("(%s): distill %q from %q", a.Letter, kv["distill.type"], kv["distill.teacher"])
				}
			}
		}
	}
}

// The study's configurations are valid vit-train configurations: every
// run's --config and --set load without error (vit-train refuses settings
// that cannot take effect), with the shape and size each arm needs.
func TestRunConfigsLoad(t *testing.T) {
	o := testOptions(t, 1)
	o.TrainSubset, o.EvalSubset = 384, 384
	cfgDir := filepath.Join(o.Work, "configs")
	if err := study.WriteConfigs(cfgDir, configFiles, false); err != nil {
		t.Fatal(err)
	}
	p := newPlan(o, cfgDir)
	for _, r := range p.Runs {
		config, _, list := sets(r.Args)
		if r.Args[0] == "finetune" {
			// What vit-train finetune puts before --set: the parent's model
			// at the new size.
			parent := armByKey(armByKey(r.Arm).From)
			list = append([]string{"model.name=" + parent.Model, "model.patch_size=2", "model.in_chans=1",
				"model.img_size=" + flagValue(r.Args, "--img-size"), "model.num_classes=10",
				"init.from=/x/last.safetensors", "init.freeze_backbone=false", "init.ema=false"}, list...)
		}
		cfg, err := train.DefaultConfig().Layer(config, list)
		if err == nil {
			err = cfg.Validate()
		}
		if err != nil {
			t.Errorf("%s: %v", r.ID, err)
			continue
		}
		if cfg.Data.Dataset != "fashion-mnist" || cfg.Data.TrainSubset != 384 || cfg.Epochs != r.Epochs || cfg.Progress {
			t.Errorf("%s: dataset %s, subset %d, epochs %d, progress %v", r.ID, cfg.Data.Dataset, cfg.Data.TrainSubset, cfg.Epochs, cfg.Progress)
		}
		if r.Arm == "" {
			continue
		}
		spec, err := cfg.ModelSpec()
		if err != nil {
			t.Fatal(err)
		}
		a := armByKey(r.Arm)
		c := spec.Config.(vit.Config)
		if c.PatchSize != 2 || c.ImageSize != a.Size || c.Distilled != a.Distilled() {
			t.Errorf("%s: patch %d, size %d, distilled %v", r.ID, c.PatchSize, c.ImageSize, c.Distilled)
		}
		if a.From != "" && (cfg.Optim.Name != "sgd" || !cfg.Optim.ScaleLR || cfg.Aug.Train != "none" || cfg.Optim.ClipGrad != 1) {
			t.Errorf("%s: fine-tuned with %+v, aug %s", r.ID, cfg.Optim, cfg.Aug.Train)
		}
	}
}

// The forward FLOPs per image grow with the tokens: 50 at 14 px, 197 at
// 28 px; the training FLOPs of a fine-tuned arm include its start's.
func TestTrainFLOPs(t *testing.T) {
	o := testOptions(t, 1)
	p := newPlan(o, "")
	f14, _ := armByKey(keyScratch14).forwardFLOPs()
	f28, _ := armByKey(keyScratch28).forwardFLOPs()
	if !(f28 > 4*f14) {
		t.Errorf("forward FLOPs %g at 28 px, %g at 14 px", f28, f14)
	}
	a, _, _ := trainFLOPs(armByKey(keyScratch28), p, 0)
	if want := 3 * f28 * 10 * 60000; math.Abs(a-want) > 1e-6*want {
		t.Errorf("(a): %g FLOPs, want %g", a, want)
	}
	b, _, _ := trainFLOPs(armByKey(keyScratch14), p, 0)
	c, _, _ := trainFLOPs(armByKey(keyEval28), p, 0)
	d, own, _ := trainFLOPs(armByKey(keyFinetune28), p, 0)
	if c != b || math.Abs(d-(b+3*f28*2*60000)) > 1e-6*d || math.Abs(own-3*f28*2*60000) > 1e-6*own {
		t.Errorf("(b) %g, (c) %g, (d) %g (own %g)", b, c, d, own)
	}
}

// fakeReport builds a report from per-arm top-1 values (3 seeds each) as
// analyse would, with the default plan's compute.
func fakeReport(t *testing.T, top1 map[string][]float64) *report {
	o := testOptions(t, 3)
	p := newPlan(o, "")
	r := &report{Opts: o, Teacher: teacherResult{Done: true, Top1: 92, Epochs: 15}}
	for _, a := range arms {
		ar := armResult{Arm: a}
		ar.TrainFLOPs, ar.OwnFLOPs, _ = trainFLOPs(a, p, 0)
		f, _ := a.forwardFLOPs()
		ar.ForwardGFLOPs = f / 1e9
		if v, ok := top1[a.Key]; ok {
			ar.Seeds, ar.Top1, ar.Cls, ar.Dist = []int{0, 1, 2}, v, v, v
			ar.CPUS = []float64{ar.TrainFLOPs / 1e9, ar.TrainFLOPs / 1e9, ar.TrainFLOPs / 1e9}
			ar.WallS = ar.CPUS
		}
		r.Arms = append(r.Arms, ar)
	}
	r.Findings = findings(r)
	return r
}

// The verdicts follow the numbers, both ways.
func TestVerdictsFollowTheNumbers(t *testing.T) {
	claimed := map[string][]float64{
		keyScratch28: {88, 88.2, 87.8}, keyScratch14: {85, 85.1, 84.9}, keyEval28: {70, 71, 69},
		keyFinetune28: {87.8, 87.9, 87.7}, keyFinetune14: {85.5, 85.6, 85.4},
		keyDistilled14: {85.2, 85.3, 85.1}, keyDistilledFT: {87.9, 88, 87.8}, keyDistilledHrd: {88.3, 88.4, 88.2},
	}
	for _, f := range fakeReport(t, claimed).Findings {
		if f.Verdict != study.Holds {
			t.Errorf("claimed numbers: %q %s (%s)", f.Claim, f.Verdict, f.Detail)
		}
	}
	if f := fakeReport(t, claimed).Findings[0]; !strings.Contains(f.Detail, "against the 0.5-point margin, (d) − (a) + 0.5: Δ +0.30 points") || !strings.Contains(f.Detail, "t = 5.20 on 2 degrees of freedom") || !strings.Contains(f.Detail, "at 0.3") {
		t.Errorf("reach detail: %s", f.Detail)
	}

	flipped := map[string][]float64{}
	for k, v := range claimed {
		flipped[k] = v
	}
	flipped[keyFinetune28] = []float64{86, 86.1, 85.9} // 2 points below (a), below (e), above (b)
	flipped[keyFinetune14] = []float64{86.5, 86.5, 86.5}
	flipped[keyEval28] = []float64{86, 86, 86}
	flipped[keyDistilledHrd] = []float64{87, 87, 87}
	for _, f := range fakeReport(t, flipped).Findings {
		want := study.DoesNotHold
		if strings.HasPrefix(f.Claim, "Fine-tuning at 28 px (d) improves") {
			want = study.Holds // 86.0 > 85.0
		}
		if f.Verdict != want {
			t.Errorf("flipped numbers: %q %s, want %s (%s)", f.Claim, f.Verdict, want, f.Detail)
		}
	}

	// (f) above (d′) by 0.07 points on average, but not on every seed.
	noisy := map[string][]float64{}
	for k, v := range claimed {
		noisy[k] = v
	}
	noisy[keyDistilledHrd] = []float64{88.4, 87.6, 87.9}
	for _, f := range fakeReport(t, noisy).Findings {
		want := study.Holds
		if strings.HasPrefix(f.Claim, "Hard distillation") {
			want = study.NotResolved
		}
		if f.Verdict != want {
			t.Errorf("noisy numbers: %q %s, want %s (%s)", f.Claim, f.Verdict, want, f.Detail)
		}
	}

	missing := map[string][]float64{keyScratch28: claimed[keyScratch28]}
	for _, f := range fakeReport(t, missing).Findings {
		if f.Verdict != study.NotMeasured {
			t.Errorf("with (a) alone: %q %s", f.Claim, f.Verdict)
		}
	}
}

func TestReachVerdict(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		d, se, margin, fraction float64
		want                    string
	}{
		{-0.4, 0, 0.5, 0.4, study.Holds},
		{0.5, 0.1, 0.5, 0.4, study.Holds},
		{-0.4, 0.1, 0.5, 0.4, study.NotResolved}, // 0.1 above the margin: 1 SE
		{-0.6, 0, 0.5, 0.4, study.DoesNotHold},
		{-0.6, 0.02, 0.5, 0.4, study.DoesNotHold},  // t −5 on 2 df
		{-0.6, 0.04, 0.5, 0.4, study.NotResolved},  // t −2.5 on 2 df: 2.5 SE, below 4.30
		{-1.33, 0.27, 0.5, 0.4, study.NotResolved}, // finetune_core.md: 3.07 SE below the margin
		{-0.6, 0.1, 0.5, 0.4, study.NotResolved},
		{0.1, 0.01, 0.5, 1.2, study.DoesNotHold}, // more compute than (a)
		{-0.1, 0, 0, 0.4, study.DoesNotHold},
		{nan, nan, 0.5, 0.4, study.NotMeasured},
		{nan, nan, 0.5, 1.2, study.NotMeasured},
		{-0.1, 0.01, 0.5, nan, study.NotMeasured},
	} {
		if got := reachVerdict(study.Diff{D: c.d, SE: c.se, DF: 2}, c.margin, c.fraction); got != c.want {
			t.Errorf("reachVerdict(%v ± %v, %v, %v) = %s, want %s", c.d, c.se, c.margin, c.fraction, got, c.want)
		}
	}
}

// The report shows every arm with its compute, the verdicts and the
// figure, and says when its budget is short.
func TestReportFromFakeResults(t *testing.T) {
	r := fakeReport(t, map[string][]float64{keyScratch28: {88, 88.2, 87.8}, keyFinetune28: {87.8, 87.9, 87.7}})
	r.Opts.Data = defaults().Data
	md := r.Markdown()
	for _, want := range []string{
		"| (a) 28 px from scratch | 28 | 3 | 88.00 ± 0.20 |", "| (d) (b) fine-tuned at 28 px | 28 | 3 | 87.80 ± 0.10 |",
		"| (c) (b) evaluated at 28 px, no fine-tuning | 28 | 0 | – |", "(finetune_top1_compute.png)",
		"vit-train info --json --model vit_fmnist_patch4_28 --patch-size 2 --img-size 14", "training FLOPs = 3 × forward FLOPs per image × images seen",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Short budget") {
		t.Error("a study at the default epochs is reported as a short budget")
	}
	r.Opts.finetuneEpochs = 1
	if !strings.Contains(r.Markdown(), "**Short budget**") {
		t.Error("a 1-epoch fine-tune is not reported as a short budget")
	}
	r.Opts.finetuneEpochs = 6
	if !strings.Contains(r.Markdown(), "**Another budget**: 10 epochs from scratch, 6 epochs of fine-tuning") {
		t.Error("a 6-epoch fine-tune is not reported as another budget")
	}
	if err := r.WriteFigures(t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

// --core plans the plain ViT's arms only, without the teacher, and its
// report leaves out the distilled architecture and the teacher.
func TestCore(t *testing.T) {
	o := testOptions(t, 2)
	o.core = true
	p := newPlan(o, "")
	var ids []string
	for _, r := range p.Runs {
		ids = append(ids, r.ID)
	}
	want := "arms/scratch28/seed0 arms/scratch14/seed0 arms/finetune28/seed0 arms/finetune14/seed0 " +
		"arms/scratch28/seed1 arms/scratch14/seed1 arms/finetune28/seed1 arms/finetune14/seed1"
	if got := strings.Join(ids, " "); got != want {
		t.Errorf("core runs %s, want %s", got, want)
	}
	if got := flagsLine(o); !strings.Contains(got, " --core") {
		t.Errorf("flags line %q lacks --core", got)
	}
	rep, err := analyse(o, p, &study.Results{Runs: map[string]*study.Result{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Arms) != 5 || len(rep.Findings) != 4 {
		t.Errorf("%d arms, %d findings; want 5 and 4", len(rep.Arms), len(rep.Findings))
	}
	md := rep.Markdown()
	for _, absent := range []string{"(b′) distilled architecture", "ResNet-20 teacher has not finished", "Hard distillation from a 28 px CNN"} {
		if strings.Contains(md, absent) {
			t.Errorf("core report has %q", absent)
		}
	}
	if !strings.Contains(md, "**Core arms only** (`--core`)") {
		t.Error("core report does not say so")
	}
	// A --core report of another budget describes the runs it has: no
	// teacher, no distilled arms.
	o.finetuneEpochs = 6
	rep.Opts = o
	md = rep.Markdown()
	if !strings.Contains(md, "> **Another budget**: 10 epochs from scratch, 6 epochs of fine-tuning, against the script's defaults of 10 and 2.") {
		t.Errorf("core banner:\n%s", md)
	}
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "- **Core arms only**") {
			continue
		}
		for _, absent := range []string{"teacher", "(f)", "(b′)", "(d′)", "ResNet"} {
			if strings.Contains(line, absent) {
				t.Errorf("core report names %q: %s", absent, line)
			}
		}
	}
	if study.ReportName(name, o.core) != "finetune_core" || !strings.Contains(md, "(finetune_core_top1_compute.png)") {
		t.Error("core report or its figure would replace the full study's")
	}
}

func TestFlagsLine(t *testing.T) {
	o := testOptions(t, 3)
	o.Data = defaults().Data
	if got := flagsLine(o); got != "" {
		t.Errorf("defaults: %q", got)
	}
	o.finetuneEpochs, o.margin = 4, 1
	if got, want := flagsLine(o), " --finetune-epochs 4 --margin 1"; got != want {
		t.Errorf("flagsLine = %q, want %q", got, want)
	}
}

func TestBoundedRatio(t *testing.T) {
	for _, c := range []struct {
		num, den bool
		want     string
	}{{false, false, "0.48"}, {true, false, "≥ 0.48"}, {false, true, "≤ 0.48"}, {true, true, "–"}} {
		if got := boundedRatio(0.4812, c.num, c.den); got != c.want {
			t.Errorf("boundedRatio(0.4812, %v, %v) = %q, want %q", c.num, c.den, got, c.want)
		}
	}
}
