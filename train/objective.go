package train

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/nn/ops"
)

// objective is a training graph's loss with its inputs and logged terms.
type objective struct {
	step    *nn.Step
	targets []float32 // (B, classes) soft targets, written before each run
	teacher []float32 // (B, classes) teacher logits when distilling, written before each run
	names   []string  // names of step.Extra, logged per step
}

// newObjective builds the loss of a training graph. Without distillation
// it is soft-target cross-entropy on the class head; a distilled model
// trained without a teacher applies it to both heads and averages. With
// distillation (d.Type soft or hard) it is DeiT's DistillationLoss:
//
//	(1−α)·CE(class head, targets) + α·D(distillation head, teacher logits)
//
// with D = DistillKL at temperature τ (soft) or HardDistillCE (hard).
func newObjective(g *nn.Graph, d DistillConfig) (*objective, error) {
	if dt := g.Images.Dtype(); dt != tensor.Float32 {
		return nil, fmt.Errorf("training graph: its images are %v, the training step needs a float32 model", dt)
	}
	classes := g.Logits.Shape()[1]
	targetsNode, targets := g.Input("targets", g.Batch, classes)
	ce, err := ops.SoftTargetCrossEntropy(g.Logits, targetsNode)
	if err != nil {
		return nil, err
	}
	obj := &objective{targets: floatData(targets)}
	loss := ce
	var extra []*gorgonia.Node
	switch {
	case d.Type == "soft" || d.Type == "hard":
		if g.DistLogits == nil {
			return nil, fmt.Errorf("distill.type = %s needs a distilled model with a distillation head (e.g. deit_fmnist_distilled_patch4_28)", d.Type)
		}
		teacherNode, teacher := g.Input("teacher_logits", g.Batch, classes)
		var kd *gorgonia.Node
		if d.Type == "soft" {
			kd, err = ops.DistillKL(g.DistLogits, teacherNode, d.Tau, d.PerBatch)
		} else {
			kd, err = ops.HardDistillCE(g.DistLogits, teacherNode)
		}
		if err != nil {
			return nil, err
		}
		if loss, err = ops.Combine([]float64{1 - d.Alpha, d.Alpha}, ce, kd); err != nil {
			return nil, err
		}
		obj.teacher = floatData(teacher)
		extra, obj.names = []*gorgonia.Node{ce, kd}, []string{"loss_base", "loss_distill"}
	case g.DistLogits != nil:
		ceDist, err := ops.SoftTargetCrossEntropy(g.DistLogits, targetsNode)
		if err != nil {
			return nil, err
		}
		if loss, err = ops.Combine([]float64{0.5, 0.5}, ce, ceDist); err != nil {
			return nil, err
		}
		extra, obj.names = []*gorgonia.Node{ce, ceDist}, []string{"loss_cls", "loss_dist_head"}
	}
	if obj.step, err = g.Differentiate(loss, extra...); err != nil {
		return nil, fmt.Errorf("training graph: %w", err)
	}
	return obj, nil
}

func floatData(t *tensor.Dense) []float32 { return t.Data().([]float32) }

// NewStep compiles the training step a run with distillation settings d
// would use on g, a float32 graph (a float64 one is an error): the loss of
// newObjective and its gradients. It returns
// the step and the inputs to fill before each run: soft targets
// (B, classes) and, when distilling, teacher logits (B, classes).
func NewStep(g *nn.Graph, d DistillConfig) (step *nn.Step, targets, teacher []float32, err error) {
	obj, err := newObjective(g, d)
	if err != nil {
		return nil, nil, nil, err
	}
	return obj.step, obj.targets, obj.teacher, nil
}
