package train

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/distill"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/nn/ops"
)

// trainingLoss is the loss of every run, distilled or not: a training
// graph's loss, compiled with its gradients, and the inputs to write
// before each run.
type trainingLoss struct {
	Step    *nn.Step
	Targets []float32 // (B, classes) soft targets
	Teacher []float32 // (B, classes) teacher logits; nil unless distilling
	// Names are the logged loss terms, one per Step.ExtraValue.
	Names []string
}

// newTrainingLoss builds and differentiates the loss of g, a float32 training
// graph (a float64 one is an error). Without distillation it is
// soft-target cross-entropy on the class head; a distilled model trained
// without a teacher applies it to both heads and averages (terms loss_cls,
// loss_dist_head). With distillation (c.Type soft or hard) it is DeiT's
// DistillationLoss (terms loss_base, loss_distill):
//
//	(1−α)·CE(class head, targets) + α·D(distillation head, teacher logits)
//
// with D = ops.DistillKL at temperature τ (soft) or ops.HardDistillCE
// (hard).
func newTrainingLoss(g *nn.Graph, c distill.Config) (*trainingLoss, error) {
	if dt := g.Images.Dtype(); dt != tensor.Float32 {
		return nil, fmt.Errorf("training graph: its images are %v, the training step needs a float32 model", dt)
	}
	classes := g.Logits.Shape()[1]
	targetsNode, targets := g.Input("targets", g.Batch, classes)
	ce, err := ops.SoftTargetCrossEntropy(g.Logits, targetsNode)
	if err != nil {
		return nil, err
	}
	obj := &trainingLoss{Targets: floatData(targets)}
	loss := ce
	var extra []*gorgonia.Node
	switch {
	case c.Distilling():
		if g.DistLogits == nil {
			return nil, fmt.Errorf("distill.type = %s needs a distilled model with a distillation head (e.g. deit_fmnist_distilled_patch4_28)", c.Type)
		}
		teacherNode, teacher := g.Input("teacher_logits", g.Batch, classes)
		var kd *gorgonia.Node
		if c.Type == "soft" {
			kd, err = ops.DistillKL(g.DistLogits, teacherNode, c.Tau, c.PerBatch)
		} else {
			kd, err = ops.HardDistillCE(g.DistLogits, teacherNode)
		}
		if err != nil {
			return nil, err
		}
		if loss, err = ops.Combine([]float64{1 - c.Alpha, c.Alpha}, ce, kd); err != nil {
			return nil, err
		}
		obj.Teacher = floatData(teacher)
		extra, obj.Names = []*gorgonia.Node{ce, kd}, []string{"loss_base", "loss_distill"}
	case g.DistLogits != nil:
		ceDist, err := ops.SoftTargetCrossEntropy(g.DistLogits, targetsNode)
		if err != nil {
			return nil, err
		}
		if loss, err = ops.Combine([]float64{0.5, 0.5}, ce, ceDist); err != nil {
			return nil, err
		}
		extra, obj.Names = []*gorgonia.Node{ce, ceDist}, []string{"loss_cls", "loss_dist_head"}
	}
	if obj.Step, err = g.Differentiate(loss, extra...); err != nil {
		return nil, fmt.Errorf("training graph: %w", err)
	}
	return obj, nil
}

func floatData(t *tensor.Dense) []float32 { return t.Data().([]float32) }
