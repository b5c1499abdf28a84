package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/formats/npy"
	"github.com/vit-train/vit-train/train"
)

func testOptions(t *testing.T, seeds int) options {
	o := defaults()
	o.seeds = seeds
	o.work = t.TempDir()
	o.data = "/data"
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
	p := newPlan(o, filepath.Join(o.work, "configs"))
	teachers := []string{teacherCNN, teacherViT, teacherCNNMatched, teacherCNN56}
	if want := len(teachers) + 3*(len(studentArms)+1) + 2; len(p.runs) != want {
		t.Fatalf("%d runs, want %d", len(p.runs), want)
	}
	// Teachers first, then whole seeds.
	for i, id := range teachers {
		if p.runs[i].ID != id {
			t.Errorf("run %d is %s, want %s", i, p.runs[i].ID, id)
		}
	}
	seen := map[int]bool{}
	last := -1
	for _, r := range p.runs[len(teachers):] {
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
	for _, a := range allArms() {
		for seed := 0; seed < 3; seed++ {
			r, ok := p.byID[seedRunID(a, seed)]
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
	npy := p.byID[seedRunID(studentArms[armIndex("hard_npy")], 1)]
	if _, kv, _ := sets(npy.Args); kv["distill.teacher_logits"] != p.byID[teacherCNN].trainLogits() {
		t.Errorf(".npy arm reads %q", kv["distill.teacher_logits"])
	}
	matched := p.byID[seedRunID(studentArms[armIndex("hard_cnn_matched")], 0)]
	if _, kv, _ := sets(matched.Args); kv["distill.teacher"] != p.byID[teacherCNNMatched].last() || kv["distill.type"] != "hard" {
		t.Errorf("matched-teacher arm distils %s from %q", kv["distill.type"], kv["distill.teacher"])
	}
	if _, kv, _ := sets(p.byID[teacherCNNMatched].Args); kv["epochs"] != strconv.Itoa(o.matchedTeacherEpochs) {
		t.Errorf("matched teacher trains %s epochs, want %d", kv["epochs"], o.matchedTeacherEpochs)
	}
	ft := p.byID[seedRunID(finetuneArm, 2)]
	if ft.Args[0] != "finetune" || !slices.Contains(ft.Args, p.byID[seedRunID(studentArms[armIndex("hard_cnn")], 2)].last()) {
		t.Errorf("fine-tuning run %v does not start from seed 2's hard_cnn", ft.Args)
	}
}

// The study's configurations are valid vit-train configurations: every
// run's --config and --set load without error (vit-train refuses settings
// that cannot take effect).
func TestRunConfigsLoad(t *testing.T) {
	o := testOptions(t, 1)
	o.trainSubset, o.evalSubset = 384, 384
	cfgDir := filepath.Join(o.work, "configs")
	if err := writeConfigs(cfgDir, false); err != nil {
		t.Fatal(err)
	}
	p := newPlan(o, cfgDir)
	for _, r := range p.runs {
		config, kv, list := sets(r.Args)
		if r.Args[0] == "finetune" {
			// What vit-train finetune puts before --set.
			pre := []string{"model.name=deit_fmnist_distilled_patch4_28", "model.in_chans=1", "model.img_size=56", "model.num_classes=10",
				"init.from=/x/last.safetensors", "init.freeze_backbone=false", "init.ema=false"}
			list = append(pre, list...)
		}
		cfg, err := train.LoadConfig(config, list)
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

// fakeVitTrain is a stand-in for the vit-train binary: it logs its
// arguments and writes the files each command writes.
const fakeVitTrain = `#!/bin/sh
echo "$*" >> "$FAKE_LOG"
cmd=$1; shift
out=""
while [ $# -gt 0 ]; do
  case $1 in --out) out=$2; shift;; esac
  shift
done
case $cmd in
  train|finetune)
    mkdir -p "$out" && : > "$out/last.safetensors"
    printf 'epoch,val_top1,epoch_seconds,images_per_s\n1,50,2,100\n' > "$out/epochs.csv" ;;
  eval)
    mkdir -p "$out" && echo '{"n":2,"top1":50,"class_head":{"n":2,"top1":50},"dist_head":{"n":2,"top1":0}}' > "$out/eval.json" ;;
  logits)
    cp "$FAKE_NPY" "$out" ;;
esac
`

func TestRunnerSkipsFinishedAndResumesStopped(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "vit-train")
	if err := os.WriteFile(bin, []byte(fakeVitTrain), 0o755); err != nil {
		t.Fatal(err)
	}
	logPath, logitsPath := filepath.Join(dir, "calls.txt"), filepath.Join(dir, "l.npy")
	// Two test images of labels 9 and 0 (the first Fashion-MNIST test
	// labels), predicted 9 and 1.
	row := func(c int) []float32 { r := make([]float32, 10); r[c] = 1; return r }
	if err := npy.WriteFile(logitsPath, append(row(9), row(1)...), []int{2, 10}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_LOG", logPath)
	t.Setenv("FAKE_NPY", logitsPath)
	r := runSpec{ID: "students/x/seed0", Dir: filepath.Join(dir, "students", "x", "seed0"), Epochs: 1, Arm: "x"}
	r.Args = []string{"train", "--config", "c.yaml", "--out", r.Dir}
	rn := &runner{build: buildInfo{Bin: bin, Tags: "test", SHA256: "abc"}, out: io.Discard}
	calls := func() []string {
		b, _ := os.ReadFile(logPath)
		_ = os.Remove(logPath)
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	ctx := context.Background()

	if err := rn.do(ctx, r, 1, 1); err != nil {
		t.Fatal(err)
	}
	got := calls()
	if len(got) != 3 || got[0] != "train --config c.yaml --out "+r.Dir || !strings.HasPrefix(got[1], "eval --checkpoint "+r.last()) ||
		!strings.HasPrefix(got[2], "logits --checkpoint "+r.last()+" --split test") {
		t.Fatalf("first run: calls %q", got)
	}
	var done doneRecord
	if err := readJSON(r.doneFile(), &done); err != nil || len(done.Attempts) != 1 || done.Binary != "abc" {
		t.Fatalf("done record %+v, %v", done, err)
	}

	// Finished: nothing runs.
	if err := rn.do(ctx, r, 1, 1); err != nil {
		t.Fatal(err)
	}
	if got := calls(); len(got) != 1 || got[0] != "" {
		t.Errorf("finished run: calls %q", got)
	}

	// Stopped after a checkpoint: resumed with the run's own config.
	if err := os.Remove(r.doneFile()); err != nil {
		t.Fatal(err)
	}
	if err := rn.do(ctx, r, 1, 1); err != nil {
		t.Fatal(err)
	}
	if got := calls(); len(got) != 1 || got[0] != "train --out "+r.Dir+" --resume" {
		t.Errorf("stopped run: calls %q", got)
	}

	// Stopped before its first checkpoint: started again.
	for _, f := range []string{r.doneFile(), r.last()} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := rn.do(ctx, r, 1, 1); err != nil {
		t.Fatal(err)
	}
	if got := calls(); len(got) != 3 || got[0] != "train --config c.yaml --out "+r.Dir {
		t.Errorf("run without a checkpoint: calls %q", got)
	}

	// The outputs read back.
	rr, err := readRun(r)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Eval.Top1 != 50 || rr.Eval.DistHead.Top1 != 0 || rr.Test.N != 2 || rr.TrainS != 2 {
		t.Errorf("read %+v", rr)
	}
	if a := accuracy(rr.Test.argmax(), []int{9, 0, 0}); a != 50 {
		t.Errorf("accuracy %v, want 50", a)
	}

	// A folder with another checkpoint but no last.safetensors is refused.
	for _, f := range []string{r.doneFile(), r.last()} {
		_ = os.Remove(f)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "best.safetensors"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rn.do(ctx, r, 1, 1); err == nil || !strings.Contains(err.Error(), "best.safetensors") {
		t.Errorf("folder with best.safetensors only: %v", err)
	}
}

func TestCompareAndVerdict(t *testing.T) {
	d := compare([]int{0, 1, 2}, []float64{91, 92, 93}, []int{0, 1, 2}, []float64{90, 90.5, 92.5})
	// Differences 1, 1.5, 0.5: mean 1, std 0.5, SE 0.5/√3.
	if !d.Paired || math.Abs(d.D-1) > 1e-12 || math.Abs(d.SE-0.5/math.Sqrt(3)) > 1e-12 || !d.Resolved() {
		t.Errorf("paired: %+v", d)
	}
	d = compare([]int{0, 1}, []float64{91, 93}, []int{0, 1, 2}, []float64{90, 91, 92})
	if d.Paired || math.Abs(d.D-1) > 1e-12 || math.Abs(d.SE-math.Sqrt(2.0/2+1.0/3)) > 1e-12 || d.Resolved() {
		t.Errorf("unpaired: %+v", d)
	}
	if d := compare([]int{0}, []float64{91}, []int{0}, []float64{90}); !math.IsNaN(d.SE) || !strings.Contains(d.String(), "one seed") {
		t.Errorf("one seed: %+v %s", d, d)
	}
	for _, c := range []struct {
		better float64
		others []float64
		want   string
	}{
		{2, []float64{1, 1.5}, holds},
		{2, []float64{1, 2}, doesNotHold},
		{math.NaN(), []float64{1}, notMeasured},
		{2, []float64{math.NaN()}, notMeasured},
	} {
		if got := verdict(c.better, c.others...); got != c.want {
			t.Errorf("verdict(%v, %v) = %s, want %s", c.better, c.others, got, c.want)
		}
	}
}

// The verdicts follow the numbers.
func TestFindingsFollowTheNumbers(t *testing.T) {
	build := func(avg map[string][]float64) *report {
		r := &report{Opts: testOptions(t, 3)}
		for _, a := range allArms() {
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
				ar.ParentAvg = []float64{80, 80, 80}
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
		finetuneArm.Key: {88, 88, 88},
	}
	v := verdicts(build(deit))
	for claim, got := range v {
		if got != holds {
			t.Errorf("DeiT's numbers: %q %s", claim, got)
		}
	}
	if len(v) != 6 {
		t.Errorf("%d findings, want 6", len(v))
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
		if v[claim] != doesNotHold {
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
	if f.Verdict != doesNotHold || !strings.HasPrefix(f.Detail, "hard, α 0.5, CNN teacher of the ViT teacher's accuracy: 86.00") || !strings.Contains(f.Detail, "CNN − ViT -0.30 points, within") {
		t.Errorf("with a CNN of the ViT's accuracy: %s: %s", f.Verdict, f.Detail)
	}
	if !strings.Contains(f.Detail, "Beside it, hard, α 0.5, CNN teacher: 87.00") || !strings.Contains(f.Detail, "+3.50 points, more than 1 point apart; the stronger teacher's student wins, so teacher type and teacher accuracy are confounded") {
		t.Errorf("the stronger CNN's arm is not reported beside it: %s", f.Detail)
	}

	// A weaker CNN whose student wins separates type from accuracy.
	withMatched.arm("hard_cnn_matched").Avg = []float64{87, 87, 87}
	withMatched.Teachers[len(withMatched.Teachers)-1].Top1 = 88
	f = teacherTypeFinding(withMatched, func(k string) *armResult { return withMatched.arm(k) })
	if f.Verdict != holds || !strings.Contains(f.Detail, "-3.50 points, more than 1 point apart; the weaker teacher's student wins, so teacher accuracy does not explain") {
		t.Errorf("a weaker CNN teacher whose student wins: %s: %s", f.Verdict, f.Detail)
	}

	delete(deit, "hard_vit")
	if v := verdicts(build(deit)); v["A convnet teacher beats a transformer teacher"] != notMeasured {
		t.Errorf("without the ViT-teacher arm: %s", v["A convnet teacher beats a transformer teacher"])
	}
}

func TestParseLabelsAndCSV(t *testing.T) {
	var b bytes.Buffer
	_ = binary.Write(&b, binary.BigEndian, [2]uint32{0x801, 3})
	b.Write([]byte{9, 0, 3})
	labels, err := parseLabelsIDX(&b)
	if err != nil || !slices.Equal(labels, []int{9, 0, 3}) {
		t.Errorf("labels %v, %v", labels, err)
	}
	var bad bytes.Buffer
	_ = binary.Write(&bad, binary.BigEndian, [2]uint32{0x803, 3})
	if _, err := parseLabelsIDX(&bad); err == nil {
		t.Error("an images file read as labels")
	}

	p := filepath.Join(t.TempDir(), "epochs.csv")
	if err := os.WriteFile(p, []byte("epoch,val_top1,ema_top1\n1,50.5,NaN\n2,60,NaN\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := readCSV(p)
	if err != nil || len(rows) != 2 || rows[1]["val_top1"] != 60 || !math.IsNaN(rows[0]["ema_top1"]) {
		t.Errorf("rows %v, %v", rows, err)
	}
	if c := column(rows, "missing"); len(c) != 2 || !math.IsNaN(c[0]) {
		t.Errorf("missing column %v", c)
	}
}

func TestAgreementAndStats(t *testing.T) {
	l := logits{Data: []float32{0, 2, 1, 3, 3, 0}, N: 2, C: 3}
	if got := l.argmax(); !slices.Equal(got, []int{1, 0}) {
		t.Errorf("argmax %v (ties go to the first)", got)
	}
	if a := agreement([]int{1, 2, 3, 4}, []int{1, 2, 0, 4}); a != 75 {
		t.Errorf("agreement %v", a)
	}
	if a := agreement([]int{1}, nil); !math.IsNaN(a) {
		t.Errorf("agreement with nothing %v", a)
	}
	s := summarize([]float64{1, 2, 3, math.NaN()})
	if s.N != 3 || s.Mean != 2 || s.Std != 1 {
		t.Errorf("stats %+v", s)
	}
	if got := pm(s); got != "2.00 ± 1.00" {
		t.Errorf("pm %q", got)
	}
}

func TestExistingRunsMustMatchTheFlags(t *testing.T) {
	o := testOptions(t, 1)
	cfgDir := filepath.Join(o.work, "configs")
	p := newPlan(o, cfgDir)
	if err := checkExisting(o, p); err != nil || p.started() {
		t.Fatalf("empty work folder: %v, started %v", err, p.started())
	}
	r := p.byID[teacherCNN]
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
	if err := checkExisting(o, p); err != nil {
		t.Errorf("matching run: %v", err)
	}
	write(r.Epochs + 1)
	if err := checkExisting(o, p); err == nil || !strings.Contains(err.Error(), teacherCNN+": epochs") {
		t.Errorf("run with other epochs: %v", err)
	}

	// Recipes: written when missing, kept when equal, refused when they
	// differ once runs have started.
	if err := writeConfigs(cfgDir, true); err != nil {
		t.Fatal(err)
	}
	if err := writeConfigs(cfgDir, true); err != nil {
		t.Errorf("same recipes: %v", err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "student.yaml"), []byte("epochs: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeConfigs(cfgDir, true); err == nil {
		t.Error("changed recipe accepted in a started study")
	}
	if err := writeConfigs(cfgDir, false); err != nil {
		t.Errorf("changed recipe before any run: %v", err)
	}
}

// TestReportStatesBudgetAndCompute checks that a study run with fewer
// epochs than the defaults says so at the top, and that the report adds up
// the runs' compute.
func TestReportStatesBudgetAndCompute(t *testing.T) {
	o := testOptions(t, 3)
	o.quick = false
	d := defaults()
	o.epochs, o.teacherEpochs, o.vitTeacherEpochs = d.epochs, d.teacherEpochs, d.vitTeacherEpochs
	teachers := []teacherResult{{ID: teacherCNN}, {ID: teacherViT}, {ID: teacherCNN56}}
	full := (&report{Opts: o, Teachers: teachers, WallS: 7200, CPUS: 3 * 3600}).Markdown()
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
	o.data = defaults().data
	if got := flagsLine(o); got != "" {
		t.Errorf("defaults: %q, want nothing", got)
	}
	o.epochs, o.matchedTeacherEpochs = 3, 1
	if got, want := flagsLine(o), " --epochs 3 --matched-teacher-epochs 1"; got != want {
		t.Errorf("flagsLine = %q, want %q", got, want)
	}
}
