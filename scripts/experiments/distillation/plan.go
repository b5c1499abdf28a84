package main

import (
	"embed"
	"fmt"
	"path/filepath"

	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
)

// configFiles are the study's recipes, written into the work folder.
//
//go:embed configs/*.yaml
var configFiles embed.FS

// Teachers' run IDs.
const (
	teacherCNN        = "teachers/resnet20"
	teacherViT        = "teachers/vit"
	teacherCNNMatched = "teachers/resnet20_matched" // stopped early, at the ViT's accuracy
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
	// Core marks the arms of --core: the claim that distillation beats the
	// same architecture without a teacher.
	Core bool
}

// Distilled says whether the arm's model has a distillation head.
func (a arm) Distilled() bool { return a.Model != "vit_fmnist_patch4_28" }

// studentArms are the arms, in the report's order.
var studentArms = []arm{
	{Key: "vit", Label: "ViT, no distillation", Short: "ViT", Model: "vit_fmnist_patch4_28", Type: "none", Core: true},
	{Key: "deit_no_teacher", Label: "distilled architecture, no teacher", Short: "no teacher", Model: "deit_fmnist_distilled_patch4_28", Type: "none", Core: true},
	{Key: "soft_tau3_alpha0.1", Label: "soft, τ 3, α 0.1 (DeiT's), CNN teacher", Short: "soft τ3 α0.1", Model: "deit_fmnist_distilled_patch4_28", Type: "soft", Alpha: 0.1, Tau: 3, Teacher: cnnTeacher},
	{Key: "soft_tau1_alpha0.5", Label: "soft, τ 1, α 0.5, CNN teacher", Short: "soft τ1 α0.5", Model: "deit_fmnist_distilled_patch4_28", Type: "soft", Alpha: 0.5, Tau: 1, Teacher: cnnTeacher},
	{Key: "hard_cnn", Label: "hard, α 0.5, CNN teacher", Short: "hard CNN", Model: "deit_fmnist_distilled_patch4_28", Type: "hard", Alpha: 0.5, Teacher: cnnTeacher, Core: true},
	{Key: "hard_vit", Label: "hard, α 0.5, ViT teacher", Short: "hard ViT", Model: "deit_fmnist_distilled_patch4_28", Type: "hard", Alpha: 0.5, Teacher: vitTeacher},
	{Key: "hard_cnn_matched", Label: "hard, α 0.5, CNN teacher of the ViT teacher's accuracy", Short: "hard CNN≈ViT", Model: "deit_fmnist_distilled_patch4_28", Type: "hard", Alpha: 0.5, Teacher: cnnMatchedTeacher},
	{Key: "hard_npy", Label: "hard, α 0.5, CNN logits from .npy", Short: "hard .npy", Model: "deit_fmnist_distilled_patch4_28", Type: "hard", Alpha: 0.5, Teacher: cnnLogits},
}

// plannedArms are the arms o runs: every arm, or the core ones with --core.
func plannedArms(o options) []arm {
	var out []arm
	for _, a := range studentArms {
		if a.Core || !o.core {
			out = append(out, a)
		}
	}
	return out
}

// seedRunID is the run ID of an arm's seed.
func seedRunID(a arm, seed int) string {
	return fmt.Sprintf("students/%s/seed%d", a.Key, seed)
}

// newPlan is the study's runs in the order they run: the teachers, then
// for each seed every arm (so that a stopped study has whole seeds) and,
// with seed 0, the exactness check. With --core: the CNN teacher and the
// core arms.
func newPlan(o options, cfgDir string) *study.Plan {
	p := study.NewPlan()
	p.Seeds = o.seeds
	m := study.NewRunMaker(o.Common)
	cfg := func(name string) string { return filepath.Join(cfgDir, name) }

	cnn := m.New(teacherCNN, 0, o.teacherEpochs, 28, "train", "--config", cfg("resnet20.yaml"))
	cnn.TrainLogits, cnn.Evals = !o.core, nil
	p.Add(cnn)
	if !o.core {
		p.Add(m.New(teacherViT, 0, o.vitTeacherEpochs, 28, "train", "--config", cfg("vit_teacher.yaml")))
		matched := m.New(teacherCNNMatched, 0, o.matchedTeacherEpochs, 28, "train", "--config", cfg("resnet20.yaml"))
		matched.Evals = nil
		p.Add(matched)
	}

	teacherSets := func(k teacherKind) []string {
		switch k {
		case cnnTeacher:
			return []string{"--set", "distill.teacher=" + p.ByID[teacherCNN].Last()}
		case vitTeacher:
			return []string{"--set", "distill.teacher=" + p.ByID[teacherViT].Last()}
		case cnnMatchedTeacher:
			return []string{"--set", "distill.teacher=" + p.ByID[teacherCNNMatched].Last()}
		case cnnLogits:
			return []string{"--set", "distill.teacher_logits=" + p.ByID[teacherCNN].TrainLogitsFile()}
		}
		return nil
	}
	distillSets := func(a arm) []string {
		var s []string
		switch a.Type {
		case "soft":
			s = []string{"--set", "distill.type=soft", "--set", "distill.alpha=" + study.FmtFloat(a.Alpha), "--set", "distill.tau=" + study.FmtFloat(a.Tau)}
		case "hard":
			s = []string{"--set", "distill.type=hard", "--set", "distill.alpha=" + study.FmtFloat(a.Alpha)}
		}
		return append(s, teacherSets(a.Teacher)...)
	}
	studentArgs := func(a arm, extra ...string) []string {
		args := []string{"train", "--config", cfg("student.yaml"), "--set", "model.name=" + a.Model}
		return append(append(args, distillSets(a)...), extra...)
	}

	for seed := 0; seed < o.seeds; seed++ {
		for _, a := range plannedArms(o) {
			r := m.New(seedRunID(a, seed), seed, o.epochs, 28, studentArgs(a)...)
			r.Arm = a.Key
			p.Add(r)
		}
		if seed == 0 && !o.core {
			// The same student, seed and data, without augmentation (the
			// live teacher then sees the images vit-train logits saw),
			// distilled from the live CNN and from its logits.
			hard := studentArms[armIndex("hard_cnn")]
			p.Add(m.New(checkLive, 0, o.checkEpochs, 28, studentArgs(hard, "--set", "aug.train=none")...))
			p.Add(m.New(checkNPY, 0, o.checkEpochs, 28, studentArgs(studentArms[armIndex("hard_npy")], "--set", "aug.train=none")...))
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

// kindLabel names a kind of run (an arm's seeds, a teacher, a check) in
// the time estimate.
func kindLabel(r study.Run) string {
	for _, a := range studentArms {
		if a.Key == r.Arm {
			return a.Label
		}
	}
	switch r.ID {
	case teacherCNN:
		return "ResNet-20 teacher"
	case teacherViT:
		return "ViT teacher"
	case teacherCNNMatched:
		return "ResNet-20 teacher of the ViT's accuracy"
	case checkLive:
		return "check: hard, live CNN, no augmentation"
	case checkNPY:
		return "check: hard, .npy logits, no augmentation"
	}
	return r.ID
}
