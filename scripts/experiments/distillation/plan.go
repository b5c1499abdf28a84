package main

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed configs/*.yaml
var configFiles embed.FS

// writeConfigs writes the study's recipes (configs/*.yaml) into dir, where
// the runs' commands name them. Once runs have started (started), a recipe
// that differs from the one in dir is an error: the study would mix
// recipes.
func writeConfigs(dir string, started bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := configFiles.ReadDir("configs")
	if err != nil {
		return err
	}
	for _, e := range entries {
		b, err := configFiles.ReadFile("configs/" + e.Name())
		if err != nil {
			return err
		}
		path := filepath.Join(dir, e.Name())
		old, err := os.ReadFile(path)
		switch {
		case err == nil && string(old) == string(b):
			continue
		case err == nil && started:
			return fmt.Errorf("%s differs from the study's %s: the runs in this work folder were started with other recipes; use another --work", path, e.Name())
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return err
		}
		if err := writeFileAtomic(path, b); err != nil {
			return err
		}
	}
	return nil
}

// started says whether any run of p has a folder.
func (p *plan) started() bool {
	for _, r := range p.runs {
		if _, err := os.Stat(r.Dir); err == nil {
			return true
		}
	}
	return false
}

// Teachers' run IDs.
const (
	teacherCNN        = "teachers/resnet20"
	teacherViT        = "teachers/vit"
	teacherCNNMatched = "teachers/resnet20_matched" // stopped early, at the ViT's accuracy
	teacherCNN56      = "teachers/resnet20_56px"
	checkLive         = "checks/hard_live_noaug"
	checkNPY          = "checks/hard_npy_noaug"
)

// teacherKind says which teacher an arm distils from.
type teacherKind int

const (
	noTeacher teacherKind = iota
	cnnTeacher
	vitTeacher
	cnnMatchedTeacher // the ResNet-20 stopped early at the ViT's accuracy
	cnnLogits         // the CNN's logits read from a .npy file
	cnn56Teacher
)

// arm is one configuration of the student, trained once per seed.
type arm struct {
	Key     string // folder name
	Label   string // name in the report's tables
	Short   string // name on the figures' axes
	Model   string
	Type    string // distill.type: none, soft or hard
	Alpha   float64
	Tau     float64
	Teacher teacherKind
	// Finetune arms start from the 28 px arm FromArm's checkpoint of the
	// same seed and train at ImageSize.
	FromArm   string
	ImageSize int
}

// Distilled says whether the arm's model has a distillation head.
func (a arm) Distilled() bool { return a.Model != "vit_fmnist_patch4_28" }

// studentArms are the arms at 28 px, in the report's order; finetuneArm is
// the arm fine-tuned at 56 px.
var (
	studentArms = []arm{
		{Key: "vit", Label: "ViT, no distillation", Short: "ViT", Model: "vit_fmnist_patch4_28", Type: "none"},
		{Key: "deit_no_teacher", Label: "distilled architecture, no teacher", Short: "no teacher", Model: "deit_fmnist_distilled_patch4_28", Type: "none"},
		{Key: "soft_tau3_alpha0.1", Label: "soft, τ 3, α 0.1 (DeiT's), CNN teacher", Short: "soft τ3 α0.1", Model: "deit_fmnist_distilled_patch4_28", Type: "soft", Alpha: 0.1, Tau: 3, Teacher: cnnTeacher},
		{Key: "soft_tau1_alpha0.5", Label: "soft, τ 1, α 0.5, CNN teacher", Short: "soft τ1 α0.5", Model: "deit_fmnist_distilled_patch4_28", Type: "soft", Alpha: 0.5, Tau: 1, Teacher: cnnTeacher},
		{Key: "hard_cnn", Label: "hard, α 0.5, CNN teacher", Short: "hard CNN", Model: "deit_fmnist_distilled_patch4_28", Type: "hard", Alpha: 0.5, Teacher: cnnTeacher},
		{Key: "hard_vit", Label: "hard, α 0.5, ViT teacher", Short: "hard ViT", Model: "deit_fmnist_distilled_patch4_28", Type: "hard", Alpha: 0.5, Teacher: vitTeacher},
		{Key: "hard_cnn_matched", Label: "hard, α 0.5, CNN teacher of the ViT teacher's accuracy", Short: "hard CNN≈ViT", Model: "deit_fmnist_distilled_patch4_28", Type: "hard", Alpha: 0.5, Teacher: cnnMatchedTeacher},
		{Key: "hard_npy", Label: "hard, α 0.5, CNN logits from .npy", Short: "hard .npy", Model: "deit_fmnist_distilled_patch4_28", Type: "hard", Alpha: 0.5, Teacher: cnnLogits},
	}
	finetuneArm = arm{Key: "finetune56_hard_cnn", Label: "hard CNN student fine-tuned at 56 px, hard, α 0.5, CNN teacher at 56 px", Short: "56 px",
		Model: "deit_fmnist_distilled_patch4_28", Type: "hard", Alpha: 0.5, Teacher: cnn56Teacher, FromArm: "hard_cnn", ImageSize: 56}
)

// allArms lists the student arms and the fine-tuning arm.
func allArms() []arm { return append(append([]arm(nil), studentArms...), finetuneArm) }

// runSpec is one vit-train training run and the outputs the study needs
// from it.
type runSpec struct {
	ID     string // folder under the work folder, e.g. students/hard_cnn/seed0
	Dir    string
	Arm    string // the arm's key; "" for teachers and checks
	Seed   int
	Epochs int
	// Args is the vit-train command that starts the run (train or finetune
	// …); an unfinished run is continued with train --out Dir --resume.
	Args []string
	// TrainLogits asks for the model's logits over the training split
	// (teacher logits for distill.teacher_logits).
	TrainLogits bool
	// ResNet marks a teacher ResNet: the study takes its top-1 from the
	// last epoch's evaluation, checked against its logits, and runs no
	// vit-train eval on it (that reports the two heads of a DeiT).
	ResNet bool
	// ImageSize is the input size; TrainImages and EvalImages the data
	// sizes (for time estimates).
	ImageSize   int
	TrainImages int
	EvalImages  int
}

// Paths of a run's outputs.
func (r runSpec) last() string       { return filepath.Join(r.Dir, "last.safetensors") }
func (r runSpec) evalDir() string    { return filepath.Join(r.Dir, "eval_last") }
func (r runSpec) testLogits() string { return filepath.Join(r.Dir, "test_logits.npy") }
func (r runSpec) trainLogits() string {
	return filepath.Join(r.Dir, "train_logits.npy")
}
func (r runSpec) doneFile() string { return filepath.Join(r.Dir, "study_done.json") }
func (r runSpec) logFile() string  { return r.Dir + ".log" }

// plan is the study's runs in the order they run: the teachers, then for
// each seed every arm (so that a stopped study has whole seeds), the
// fine-tuning arm and, with seed 0, the exactness check.
type plan struct {
	runs []runSpec
	byID map[string]runSpec
}

func (p *plan) add(r runSpec) {
	p.runs = append(p.runs, r)
	p.byID[r.ID] = r
}

// seedRunID is the run ID of an arm's seed.
func seedRunID(a arm, seed int) string {
	if a.ImageSize != 0 {
		return fmt.Sprintf("finetune/%s/seed%d", a.Key, seed)
	}
	return fmt.Sprintf("students/%s/seed%d", a.Key, seed)
}

func newPlan(o options, cfgDir string) *plan {
	p := &plan{byID: map[string]runSpec{}}
	trainN, evalN := 60000, 10000
	if o.trainSubset > 0 && o.trainSubset < trainN {
		trainN = o.trainSubset
	}
	if o.evalSubset > 0 && o.evalSubset < evalN {
		evalN = o.evalSubset
	}
	dataSets := []string{"--set", "data.root=" + o.data}
	if o.trainSubset > 0 {
		dataSets = append(dataSets, "--set", "data.train_subset="+strconv.Itoa(o.trainSubset))
	}
	if o.evalSubset > 0 {
		dataSets = append(dataSets, "--set", "data.eval_subset="+strconv.Itoa(o.evalSubset))
	}
	cfg := func(name string) string { return filepath.Join(cfgDir, name) }
	newRun := func(id string, seed, epochs, size int, args ...string) runSpec {
		dir := filepath.Join(o.work, filepath.FromSlash(id))
		args = append(args, "--out", dir, "--set", "epochs="+strconv.Itoa(epochs), "--set", "seed="+strconv.Itoa(seed))
		return runSpec{ID: id, Dir: dir, Seed: seed, Epochs: epochs, Args: append(args, dataSets...),
			ImageSize: size, TrainImages: trainN, EvalImages: evalN}
	}

	cnn := newRun(teacherCNN, 0, o.teacherEpochs, 28, "train", "--config", cfg("resnet20.yaml"))
	cnn.TrainLogits, cnn.ResNet = true, true
	p.add(cnn)
	p.add(newRun(teacherViT, 0, o.vitTeacherEpochs, 28, "train", "--config", cfg("vit_teacher.yaml")))
	matched := newRun(teacherCNNMatched, 0, o.matchedTeacherEpochs, 28, "train", "--config", cfg("resnet20.yaml"))
	matched.ResNet = true
	p.add(matched)
	cnn56 := newRun(teacherCNN56, 0, o.teacher56Epochs, 56, "train", "--config", cfg("resnet20.yaml"), "--set", "model.img_size=56")
	cnn56.ResNet = true
	p.add(cnn56)

	teacherSets := func(k teacherKind) []string {
		switch k {
		case cnnTeacher:
			return []string{"--set", "distill.teacher=" + p.byID[teacherCNN].last()}
		case vitTeacher:
			return []string{"--set", "distill.teacher=" + p.byID[teacherViT].last()}
		case cnnMatchedTeacher:
			return []string{"--set", "distill.teacher=" + p.byID[teacherCNNMatched].last()}
		case cnnLogits:
			return []string{"--set", "distill.teacher_logits=" + p.byID[teacherCNN].trainLogits()}
		case cnn56Teacher:
			return []string{"--set", "distill.teacher=" + p.byID[teacherCNN56].last()}
		}
		return nil
	}
	distillSets := func(a arm) []string {
		var s []string
		switch a.Type {
		case "soft":
			s = []string{"--set", "distill.type=soft", "--set", "distill.alpha=" + fmtFloat(a.Alpha), "--set", "distill.tau=" + fmtFloat(a.Tau)}
		case "hard":
			s = []string{"--set", "distill.type=hard", "--set", "distill.alpha=" + fmtFloat(a.Alpha)}
		}
		return append(s, teacherSets(a.Teacher)...)
	}
	studentArgs := func(a arm, extra ...string) []string {
		args := []string{"train", "--config", cfg("student.yaml"), "--set", "model.name=" + a.Model}
		return append(append(args, distillSets(a)...), extra...)
	}

	for seed := 0; seed < o.seeds; seed++ {
		for _, a := range studentArms {
			r := newRun(seedRunID(a, seed), seed, o.epochs, 28, studentArgs(a)...)
			r.Arm = a.Key
			p.add(r)
		}
		a := finetuneArm
		parent := p.byID[seedRunID(studentArms[armIndex(a.FromArm)], seed)]
		r := newRun(seedRunID(a, seed), seed, o.finetuneEpochs, a.ImageSize,
			append([]string{"finetune", "--from", parent.last(), "--img-size", strconv.Itoa(a.ImageSize), "--config", cfg("finetune56.yaml")},
				teacherSets(a.Teacher)...)...)
		r.Arm = a.Key
		p.add(r)
		if seed == 0 {
			// The same student, seed and data, without augmentation (the
			// live teacher then sees the images vit-train logits saw),
			// distilled from the live CNN and from its logits.
			hard := studentArms[armIndex("hard_cnn")]
			p.add(newRun(checkLive, 0, o.checkEpochs, 28, studentArgs(hard, "--set", "aug.train=none")...))
			p.add(newRun(checkNPY, 0, o.checkEpochs, 28, studentArgs(studentArms[armIndex("hard_npy")], "--set", "aug.train=none")...))
		}
	}
	return p
}

// armIndex is the index of the student arm key in studentArms.
func armIndex(key string) int {
	for i, a := range studentArms {
		if a.Key == key {
			return i
		}
	}
	panic("no student arm " + key)
}

// fmtFloat writes v as --set parses it.
func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// runConfig is the part of a run folder's config.yaml that the study's
// flags set.
type runConfig struct {
	Epochs int    `yaml:"epochs"`
	Seed   uint64 `yaml:"seed"`
	Data   struct {
		Root        string `yaml:"root"`
		TrainSubset int    `yaml:"train_subset"`
		EvalSubset  int    `yaml:"eval_subset"`
	} `yaml:"data"`
}

// checkExisting refuses run folders started with other settings than the
// plan's (other flags, or another study in the same work folder): a
// finished one would be skipped and an unfinished one resumed with its own.
func checkExisting(o options, p *plan) error {
	var bad []string
	for _, r := range p.runs {
		b, err := os.ReadFile(filepath.Join(r.Dir, "config.yaml"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		var c runConfig
		if err := yaml.Unmarshal(b, &c); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(r.Dir, "config.yaml"), err)
		}
		var diffs []string
		add := func(key string, got, want any) {
			if got != want {
				diffs = append(diffs, fmt.Sprintf("%s %v (now %v)", key, got, want))
			}
		}
		add("epochs", c.Epochs, r.Epochs)
		add("seed", c.Seed, uint64(r.Seed))
		add("data.root", c.Data.Root, o.data)
		add("data.train_subset", c.Data.TrainSubset, o.trainSubset)
		add("data.eval_subset", c.Data.EvalSubset, o.evalSubset)
		if len(diffs) > 0 {
			bad = append(bad, r.ID+": "+strings.Join(diffs, ", "))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("run folders in %s were started with other settings: %s; give the flags they were started with, or another --work",
			o.work, strings.Join(bad, "; "))
	}
	return nil
}
