package main

import (
	"embed"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/vit-train/vit-train/model"
	_ "github.com/vit-train/vit-train/model/vit" // registers the ViT presets
	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
)

// configFiles are the study's recipes, written into the work folder:
// train.yaml (the arms trained from scratch), finetune.yaml (the arms
// fine-tuned) and resnet20.yaml (the teacher).
//
//go:embed configs/*.yaml
var configFiles embed.FS

// teacherCNN is the run ID of the ResNet-20 teacher at 28 px, shared by
// the seeds of arm (f).
const teacherCNN = "teachers/resnet20"

// patchSize is the patch of every ViT of the study: 7×7 tokens at 14 px,
// 14×14 at 28 px.
const patchSize = 2

// Image sizes: the low resolution of training, the native one of the data.
const (
	lowSize    = 14
	nativeSize = 28
)

// The ViT presets the arms take (dim 64, depth 4, 4 heads, MLP 128), set
// to patch 2: the plain ViT, and the distilled architecture (a
// distillation token and head) that hard distillation needs.
const (
	plainModel     = "vit_fmnist_patch4_28"
	distilledModel = "deit_fmnist_distilled_patch4_28"
)

// eval28 is the evaluation at 28 px of a model trained at 14 px, without
// fine-tuning: arm (c).
var eval28 = study.Eval{Name: "eval_28px", Args: []string{"--img-size", strconv.Itoa(nativeSize)}}

// arm is one configuration, trained (or evaluated) once per seed.
type arm struct {
	Key    string // folder name
	Letter string // (a), (b), … in the report
	Label  string
	Short  string // name on the figure
	Model  string
	// Size is the image size it trains and is evaluated at.
	Size int
	// From is the key of the arm whose checkpoint of the same seed it
	// fine-tunes; "" for an arm trained from scratch.
	From string
	// EvalOf is, for an arm that is only an evaluation, the key of the
	// arm whose checkpoint it evaluates at Size; it has no run of its own.
	EvalOf string
	// Teacher marks hard distillation from the ResNet-20 during the
	// fine-tune.
	Teacher bool
}

// Distilled says whether the arm's model has a distillation head.
func (a arm) Distilled() bool { return a.Model == distilledModel }

// Arms' keys.
const (
	keyScratch28    = "scratch28"
	keyScratch14    = "scratch14"
	keyEval28       = "scratch14_eval28"
	keyFinetune28   = "finetune28"
	keyFinetune14   = "finetune14"
	keyDistilled14  = "distilled_scratch14"
	keyDistilledFT  = "distilled_finetune28"
	keyDistilledHrd = "distilled_finetune28_hard_cnn"
)

// arms are the study's arms in the report's order.
var arms = []arm{
	{Key: keyScratch28, Letter: "a", Label: "28 px from scratch", Short: "(a) 28 px scratch", Model: plainModel, Size: nativeSize},
	{Key: keyScratch14, Letter: "b", Label: "14 px from scratch, evaluated at 14 px", Short: "(b) 14 px scratch", Model: plainModel, Size: lowSize},
	{Key: keyEval28, Letter: "c", Label: "(b) evaluated at 28 px, no fine-tuning", Short: "(c) (b) at 28 px", Model: plainModel, Size: nativeSize, EvalOf: keyScratch14},
	{Key: keyFinetune28, Letter: "d", Label: "(b) fine-tuned at 28 px", Short: "(d) (b)→28 px", Model: plainModel, Size: nativeSize, From: keyScratch14},
	{Key: keyFinetune14, Letter: "e", Label: "(b) fine-tuned at 14 px, the same steps (control)", Short: "(e) (b)→14 px", Model: plainModel, Size: lowSize, From: keyScratch14},
	{Key: keyDistilled14, Letter: "b′", Label: "distilled architecture, 14 px from scratch, no teacher", Short: "(b′) distilled 14 px", Model: distilledModel, Size: lowSize},
	{Key: keyDistilledFT, Letter: "d′", Label: "(b′) fine-tuned at 28 px, no teacher", Short: "(d′) (b′)→28 px", Model: distilledModel, Size: nativeSize, From: keyDistilled14},
	{Key: keyDistilledHrd, Letter: "f", Label: "(b′) fine-tuned at 28 px, hard distillation from the 28 px ResNet-20", Short: "(f) (b′)→28 px + CNN", Model: distilledModel, Size: nativeSize, From: keyDistilled14, Teacher: true},
}

// inCore says whether the arm is one of --core's: the plain ViT's.
func (a arm) inCore() bool { return a.Model == plainModel }

// plannedArms are the arms o runs: every arm, or the plain ViT's with
// --core.
func plannedArms(o options) []arm {
	var out []arm
	for _, a := range arms {
		if a.inCore() || !o.core {
			out = append(out, a)
		}
	}
	return out
}

// armByKey returns the arm of key.
func armByKey(key string) arm {
	for _, a := range arms {
		if a.Key == key {
			return a
		}
	}
	panic("no arm " + key)
}

// seedRunID is the run ID of an arm's seed (for an evaluation-only arm,
// the run it evaluates).
func seedRunID(a arm, seed int) string {
	if a.EvalOf != "" {
		a = armByKey(a.EvalOf)
	}
	return fmt.Sprintf("arms/%s/seed%d", a.Key, seed)
}

// forwardFLOPs are the forward FLOPs per image of the arm's ViT, as
// vit-train info --json reports them (forward_gflops_per_image × 1e9)
// with the shape flags of infoArgs.
func (a arm) forwardFLOPs() (float64, error) {
	spec, err := model.Create(a.Model, model.Overrides{PatchSize: patchSize, ImageSize: a.Size})
	if err != nil {
		return 0, err
	}
	return float64(spec.Config.ForwardFLOPs()), nil
}

// infoArgs is the vit-train info command that prints the arm's FLOPs.
func (a arm) infoArgs() string {
	return fmt.Sprintf("vit-train info --json --model %s --patch-size %d --img-size %d", a.Model, patchSize, a.Size)
}

// newPlan is the study's runs in the order they run: the teacher (not
// with --core), then for each seed every planned arm with a run (so that a
// stopped study has whole seeds), each fine-tuning arm after the arm it
// starts from.
func newPlan(o options, cfgDir string) *study.Plan {
	p := study.NewPlan()
	p.Seeds = o.seeds
	m := study.NewRunMaker(o.Common)
	cfg := func(name string) string { return filepath.Join(cfgDir, name) }
	quiet := []string{"--set", "progress=false"}

	if !o.core {
		cnn := m.New(teacherCNN, 0, o.teacherEpochs, nativeSize, append([]string{"train", "--config", cfg("resnet20.yaml")}, quiet...)...)
		cnn.Evals = nil
		p.Add(cnn)
	}

	for seed := 0; seed < o.seeds; seed++ {
		for _, a := range plannedArms(o) {
			if a.EvalOf != "" {
				continue
			}
			var r study.Run
			if a.From == "" {
				r = m.New(seedRunID(a, seed), seed, o.epochs, a.Size, append([]string{"train", "--config", cfg("train.yaml"),
					"--set", "model.name=" + a.Model, "--set", "model.patch_size=" + strconv.Itoa(patchSize),
					"--set", "model.img_size=" + strconv.Itoa(a.Size)}, quiet...)...)
			} else {
				args := []string{"finetune", "--from", p.ByID[seedRunID(armByKey(a.From), seed)].Last(),
					"--img-size", strconv.Itoa(a.Size), "--config", cfg("finetune.yaml")}
				if a.Teacher {
					args = append(args, "--set", "distill.type=hard", "--set", "distill.alpha=0.5",
						"--set", "distill.teacher="+p.ByID[teacherCNN].Last())
				}
				r = m.New(seedRunID(a, seed), seed, o.finetuneEpochs, a.Size, append(args, quiet...)...)
			}
			r.Arm = a.Key
			if a.Key == keyScratch14 {
				r.Evals = append(r.Evals, eval28)
			}
			p.Add(r)
		}
	}
	return p
}

// kindLabel names a kind of run (an arm's seeds, the teacher) in the time
// estimate.
func kindLabel(r study.Run) string {
	if r.ID == teacherCNN {
		return "ResNet-20 teacher, 28 px"
	}
	a := armByKey(r.Arm)
	return fmt.Sprintf("(%s) %s", a.Letter, a.Label)
}
