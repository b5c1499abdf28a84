package train

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/ops"
)

// objective is a training graph's loss with its inputs and logged terms.
type objective struct {
	step    *model.Step
	targets []float32 // (B, classes) soft targets, written before each run
	names   []string  // names of step.Extra, logged per step
}

// newObjective builds the loss of a training graph: soft-target
// cross-entropy on the class head; a distilled model trained without a
// teacher applies it to both heads and averages.
func newObjective(g *model.Graph) (*objective, error) {
	c := g.Model.Config
	targetsNode, targets := g.Input("targets", g.Batch, c.NumClasses)
	ce, err := ops.SoftTargetCrossEntropy(g.Logits, targetsNode)
	if err != nil {
		return nil, err
	}
	loss := ce
	var extra []*gorgonia.Node
	var names []string
	if g.DistLogits != nil {
		ceDist, err := ops.SoftTargetCrossEntropy(g.DistLogits, targetsNode)
		if err != nil {
			return nil, err
		}
		if loss, err = ops.Combine([]float64{0.5, 0.5}, ce, ceDist); err != nil {
			return nil, err
		}
		extra, names = []*gorgonia.Node{ce, ceDist}, []string{"loss_cls", "loss_dist_head"}
	}
	step, err := g.Differentiate(loss, extra...)
	if err != nil {
		return nil, fmt.Errorf("training graph: %w", err)
	}
	return &objective{step: step, targets: floatData(targets), names: names}, nil
}

func floatData(t *tensor.Dense) []float32 { return t.Data().([]float32) }
