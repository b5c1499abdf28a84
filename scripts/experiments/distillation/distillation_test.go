package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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

func TestPlanRunsEveryArmPerSeed(t *testing.T) {
	o := testOptions(t, 3)
	p := newPlan(o, filepath.Join(o.Work, "configs"))
	teachers := []string{teacherCNN, teacherViT, teacherCNNMatched}
	if want := len(teachers) + 3*len(studentArms) + 2; len(p.Runs) != want {
		t.Fatalf("%d runs, want %d", len(p.Runs), want)
	}
	// Teachers first, then whole seeds.
	for i, id := range teachers {
		if p.Runs[i].ID != id {
			t.Errorf("run %d is %s, want %s", i, p.Runs[i].ID, id)
		}
	}
	seen := map[int]bool{}
	last := -1
	for _, r := range p.Runs[len(teachers):] {
		if r.Arm == "" {
			continue
		}
		if r.Seed < last {
			t.Errorf("%s (seed %d) after seed %d", r.ID, r.Seed, last)
		}
		last, seen[r.Seed] = r.Seed, true
	}
	if len(seen) != 3 {
		t.Errorf("seeds %v, want 0, 1, 2", seen)
	}
	for _, a := range studentArms {
		for seed := 0; seed < 3; seed++ {
			r, ok := p.ByID[seedRunID(a, seed)]
			if !ok {
				t.Fatalf("no run of %s seed %d", a.Key, seed)
			}
			_, kv, _ := sets(r.Args)
			if kv["seed"] != strings.TrimPrefix(filepath.Base(r.ID), "seed") || kv["data.root"] != "/data" {
				t.Errorf("%s: seed %q, data.root %q", r.ID, kv["seed"], kv["data.root"])
			}
			if _, ok := kv["distill.tau"]; ok != (a.Type == "soft") {
				t.Errorf("%s: distill.tau set = %v with distill.type %s", r.ID, ok, a.Type)
			}
			if kv["distill.type"] != map[string]string{"none": ""}[a.Type] && kv["distill.type"] != a.Type {
				t.Errorf("%s: distill.type %q, want %q", r.ID, kv["distill.type"], a.Type)
			}
		}
	}
	npy := p.ByID[seedRunID(studentArms[armIndex("hard_npy")], 1)]
	if _, kv, _ := sets(npy.Args); kv["distill.teacher_logits"] != p.ByID[teacherCNN].TrainLogitsFile() {
		t.Errorf(".npy arm reads %q", kv["distill.teacher_logits"])
	}
	matched := p.ByID[seedRunID(studentArms[armIndex("hard_cnn_matched")], 0)]
	if _, kv, _ := sets(matched.Args); kv["distill.teacher"] != p.ByID[teacherCNNMatched].Last() || kv["distill.type"] != "hard" {
		t.Errorf("matched-teacher arm distils %s from %q", kv["distill.type"], kv["distill.teacher"])
	}
	if _, kv, _ := sets(p.ByID[teacherCNNMatched].Args); kv["epochs"] != strconv.Itoa(o.matchedTeacherEpochs) {
		t.Errorf("matched teacher trains %s epochs, want %d", kv["epochs"], o.matchedTeacherEpochs)
	}
}

// The study's configurations are valid vit-train configurations: every
// run's --config and --set load without error (vit-train refuses settings
// that cannot take effect).
func TestRunConfigsLoad(t *testing.T) {
	o := testOptions(t, 1)
	o.TrainSubset, o.EvalSubset = 384, 384
	cfgDir := filepath.Join(o.Work, "configs")
	if err := study.WriteConfigs(cfgDir, configFiles, false); err != nil {
		t.Fatal(err)
	}
	p := newPlan(o, cfgDir)
	for _, r := range p.Runs {
		config, kv, list := sets(r.Args)
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
		if r.Arm != "" && r.Arm != "vit" && cfg.Model.Name != "deit_fmnist_distilled_patch4_28" {
			t.Errorf("%s: model %s", r.ID, cfg.Model.Name)
		}
		_ = kv
	}
}

// The verdicts follow the numbers.
func TestFindingsFollowTheNumbers(t *testing.T) {
	build := func(avg map[string][]float64) *report {
		r := &report{Opts: testOptions(t, 3)}
		for _, a := range studentArms {
			v, ok := avg[a.Key]
			ar := armResult{Arm: a}
			if ok {
				ar.Seeds = []int{0, 1, 2}
				ar.Avg = v
				ar.Cls, ar.Dist = make([]float64, 3), make([]float64, 3)
				for i := range v {
					ar.Cls[i], ar.Dist[i] = v[i]-0.5, v[i]-0.3
				}
				ar.AgreeCNN = v
			}
			r.Arms = append(r.Arms, ar)
		}
		r.Teachers = []teacherResult{{ID: teacherCNN, Done: true, Top1: 92}, {ID: teacherViT, Done: true, Top1: 91.5}}
		return r
	}
	verdicts := func(r *report) map[string]string {
		m := map[string]string{}
		for _, f := range findings(r) {
			m[f.Claim] = f.Verdict
		}
		return m
	}
	deit := map[string][]float64{
		"vit": {85, 85.2, 84.8}, "deit_no_teacher": {85.5, 85.4, 85.6},
		"soft_tau3_alpha0.1": {86, 86.1, 85.9}, "soft_tau1_alpha0.5": {86.2, 86.3, 86.1},
		"hard_cnn": {87, 87.1, 86.9}, "hard_vit": {86.5, 86.6, 86.4}, "hard_npy": {87, 87, 87},
	}
	v := verdicts(build(deit))
	for claim, got := range v {
		if got != study.Holds {
			t.Errorf("DeiT's numbers: %q %s", claim, got)
		}
	}
	if len(v) != 5 {
		t.Errorf("%d findings, want 5", len(v))
	}

	// Soft above hard, the ViT teacher above the CNN, no distillation on top.
	flipped := map[string][]float64{}
	for k, x := range deit {
		flipped[k] = x
	}
	flipped["soft_tau1_alpha0.5"] = []float64{88, 88, 88}
	flipped["hard_vit"] = []float64{87.5, 87.5, 87.5}
	flipped["vit"] = []float64{90, 90, 90}
	v = verdicts(build(flipped))
	for _, claim := range []string{"Hard distillation beats soft distillation", "Distillation beats no distillation at equal epochs", "A convnet teacher beats a transformer teacher"} {
		if v[claim] != study.DoesNotHold {
			t.Errorf("flipped numbers: %q %s", claim, v[claim])
		}
	}

	// The CNN of the ViT's accuracy decides the teacher type, not the
	// stronger CNN.
	matched := map[string][]float64{}
	for k, x := range deit {
		matched[k] = x
	}
	matched["hard_cnn_matched"] = []float64{86, 86.1, 85.9}
	withMatched := build(matched)
	withMatched.Teachers = append(withMatched.Teachers, teacherResult{ID: teacherCNNMatched, Done: true, Top1: 91.2})
	withMatched.Teachers[0].Top1 = 95
	f := teacherTypeFinding(withMatched, func(k string) *armResult { return withMatched.arm(k) })
	if f.Verdict != study.DoesNotHold || !strings.HasPrefix(f.Detail, "hard, α 0.5, CNN teacher of the ViT teacher's accuracy: 86.00") || !strings.Contains(f.Detail, "CNN − ViT -0.30 points, within") {
		t.Errorf("with a CNN of the ViT's accuracy: %s: %s", f.Verdict, f.Detail)
	}
	if !strings.Contains(f.Detail, "Beside it, hard, α 0.5, CNN teacher: 87.00") || !strings.Contains(f.Detail, "+3.50 points, more than 1 point apart; the stronger teacher's student wins, so teacher type and teacher accuracy are confounded") {
		t.Errorf("the stronger CNN's arm is not reported beside it: %s", f.Detail)
	}

	// A weaker CNN whose student wins separates type from accuracy.
	withMatched.arm("hard_cnn_matched").Avg = []float64{87, 87, 87}
	withMatched.Teachers[len(withMatched.Teachers)-1].Top1 = 88
	f = teacherTypeFinding(withMatched, func(k string) *armResult { return withMatched.arm(k) })
	if f.Verdict != study.Holds || !strings.Contains(f.Detail, "-3.50 points, more than 1 point apart; the weaker teacher's student wins, so teacher accuracy does not explain") {
		t.Errorf("a weaker CNN teacher whose student wins: %s: %s", f.Verdict, f.Detail)
	}

	// A weaker CNN whose student is ahead by a margin the seeds do not
	// resolve names no winner: the reading follows the verdict.
	withMatched.arm("hard_cnn_matched").Avg = []float64{87.6, 86.1, 87.2}
	f = teacherTypeFinding(withMatched, func(k string) *armResult { return withMatched.arm(k) })
	if f.Verdict != study.NotResolved || !strings.Contains(f.Detail, "-3.50 points, more than 1 point apart; the seeds do not resolve which student wins") || strings.Contains(f.Detail, "the weaker teacher's student wins") {
		t.Errorf("an unresolved win of the weaker teacher's student: %s: %s", f.Verdict, f.Detail)
	}

	delete(deit, "hard_vit")
	if v := verdicts(build(deit)); v["A convnet teacher beats a transformer teacher"] != study.NotMeasured {
		t.Errorf("without the ViT-teacher arm: %s", v["A convnet teacher beats a transformer teacher"])
	}
}

func TestExistingRunsMustMatchTheFlags(t *testing.T) {
	o := testOptions(t, 1)
	cfgDir := filepath.Join(o.Work, "configs")
	p := newPlan(o, cfgDir)
	if err := study.CheckExisting(o.Common, p); err != nil || p.Started() {
		t.Fatalf("empty work folder: %v, started %v", err, p.Started())
	}
	r := p.ByID[teacherCNN]
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(epochs int) {
		y := "epochs: " + strconv.Itoa(epochs) + "\nseed: 0\ndata:\n  root: /data\n  train_subset: 0\n  eval_subset: 0\n"
		if err := os.WriteFile(filepath.Join(r.Dir, "config.yaml"), []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(r.Epochs)
	if err := study.CheckExisting(o.Common, p); err != nil {
		t.Errorf("matching run: %v", err)
	}
	write(r.Epochs + 1)
	if err := study.CheckExisting(o.Common, p); err == nil || !strings.Contains(err.Error(), teacherCNN+": epochs") {
		t.Errorf("run with other epochs: %v", err)
	}

	// Recipes: written when missing, kept when equal, refused when their
	// values differ once runs have started.
	if err := study.WriteConfigs(cfgDir, configFiles, true); err != nil {
		t.Fatal(err)
	}
	if err := study.WriteConfigs(cfgDir, configFiles, true); err != nil {
		t.Errorf("same recipes: %v", err)
	}
	// Other comments are the same recipe: accepted, and the file takes the
	// study's text.
	student, err := configFiles.ReadFile("configs/student.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "student.yaml"), append([]byte("# an older comment\n"), student...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := study.WriteConfigs(cfgDir, configFiles, true); err != nil {
		t.Errorf("recipe with other comments: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(cfgDir, "student.yaml")); err != nil || string(b) != string(student) {
		t.Errorf("student.yaml not rewritten with the study's text: %v", err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "student.yaml"), []byte("epochs: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := study.WriteConfigs(cfgDir, configFiles, true); err == nil {
		t.Error("changed recipe accepted in a started study")
	}
	if err := study.WriteConfigs(cfgDir, configFiles, false); err != nil {
		t.Errorf("changed recipe before any run: %v", err)
	}
}

// TestReportStatesBudgetAndCompute checks that a study run with fewer
// epochs than the defaults says so at the top, and that the report adds up
// the runs' compute.
func TestReportStatesBudgetAndCompute(t *testing.T) {
	o := testOptions(t, 3)
	o.Quick = false
	d := defaults()
	o.epochs, o.teacherEpochs, o.vitTeacherEpochs = d.epochs, d.teacherEpochs, d.vitTeacherEpochs
	teachers := []teacherResult{{ID: teacherCNN}, {ID: teacherViT}}
	full := (&report{Opts: o, Teachers: teachers, Tally: study.Tally{WallS: 7200, CPUS: 3 * 3600}}).Markdown()
	if strings.Contains(full, "Short budget") {
		t.Error("a study at the default epochs is reported as a short budget")
	}
	if !strings.Contains(full, "took 2.0 h of wall-clock time and 3.0 h of CPU time") {
		t.Errorf("the compute line is missing or wrong:\n%s", full)
	}
	o.epochs = 3
	short := (&report{Opts: o, Teachers: teachers}).Markdown()
	if !strings.Contains(short, "**Short budget**: students 3 epochs") {
		t.Errorf("a 3-epoch study does not say it is a short budget:\n%s", short)
	}
}

// The report's command line names every epoch flag that differs from the
// defaults, and only those.
func TestFlagsLineNamesChangedFlags(t *testing.T) {
	o := testOptions(t, 3)
	o.Data = defaults().Data
	if got := flagsLine(o); got != "" {
		t.Errorf("defaults: %q, want nothing", got)
	}
	o.epochs, o.matchedTeacherEpochs = 3, 1
	if got, want := flagsLine(o), " --epochs 3 --matched-teacher-epochs 1"; got != want {
		t.Errorf("flagsLine = %q, want %q", got, want)
	}
}

// --core runs the CNN teacher and the three arms of "distillation beats
// the same architecture without a teacher", and the report of those runs
// alone measures that claim.
func TestCorePlanAndReport(t *testing.T) {
	o := testOptions(t, 3)
	o.core = true
	p := newPlan(o, filepath.Join(o.Work, "configs"))
	var ids []string
	for _, r := range p.Runs {
		ids = append(ids, r.ID)
	}
	want := []string{teacherCNN}
	for seed := 0; seed < 3; seed++ {
		for _, k := range []string{"vit", "deit_no_teacher", "hard_cnn"} {
			want = append(want, seedRunID(studentArms[armIndex(k)], seed))
		}
	}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("core runs %v, want %v", ids, want)
	}
	if got := flagsLine(o); got != " --core --data /data" {
		t.Errorf("flags line %q", got)
	}
	rep := &report{Opts: o}
	for _, a := range plannedArms(o) {
		v := map[string][]float64{"vit": {85, 85.2, 84.8}, "deit_no_teacher": {85.5, 85.4, 85.6}, "hard_cnn": {86, 86.1, 86.2}}[a.Key]
		rep.Arms = append(rep.Arms, armResult{Arm: a, Seeds: []int{0, 1, 2}, Avg: v, Cls: v, Dist: v, AgreeCNN: v})
	}
	for _, f := range findings(rep) {
		want := study.NotMeasured
		if f.Claim == "Distillation beats no distillation at equal epochs" || f.Claim == "Distillation makes the student agree more with its teacher" {
			want = study.Holds
		}
		if f.Claim == "The two-head ensemble beats each head alone" {
			want = study.DoesNotHold // the heads are equal here
		}
		if f.Verdict != want {
			t.Errorf("%s: %s, want %s", f.Claim, f.Verdict, want)
		}
	}
	md := rep.Markdown()
	if !strings.Contains(md, "**Core arms only**") {
		t.Error("the report of a --core study does not say so")
	}
	// The core report and its figures stand beside the full study's.
	if reportName(o) != "distillation_core" || !strings.Contains(md, "](distillation_core_top1.png)") || !strings.Contains(md, "](distillation_core_curves.png)") {
		t.Errorf("core report %q does not name its own figures", reportName(o))
	}
	o.core = false
	if reportName(o) != "distillation" || barFigure(o) != "distillation_top1.png" {
		t.Errorf("full study's report %q, figure %q", reportName(o), barFigure(o))
	}
}
