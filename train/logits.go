package train

import (
	"context"
	"fmt"

	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/nn"
)

// Logits runs the model of the checkpoint at path (a ViT or a ResNet) over
// one split of its training data, in item order, through its evaluation
// preprocessing, and returns its inference logits (N, C) row-major: the
// class head, or the mean of both heads for a distilled ViT. o says how
// the checkpoint is opened (OpenEval; o.TrainData is set from split). The
// rows align with the items a run with the same data settings trains on,
// as distill.teacher_logits needs.
func Logits(path string, split data.Split, o EvalOptions) (logits []float32, n, classes int, err error) {
	o.TrainData = split == data.Train
	r, err := OpenEval(path, o)
	if err != nil {
		return nil, 0, 0, err
	}
	inf, err := nn.NewInference(r.Graph)
	if err != nil {
		return nil, 0, 0, err
	}
	classes = r.Net.Spec().NumClasses()
	n = r.Items.Len()
	logits = make([]float32, n*classes)
	err = inferEpoch(context.Background(), inf, r.Loader, func(b inferred) error {
		for i, j := range b.indices {
			if j < 0 || j >= n {
				return fmt.Errorf("logits: item %d outside the %d items", j, n)
			}
			copy(logits[j*classes:(j+1)*classes], b.logits[i*classes:(i+1)*classes])
		}
		return nil
	})
	if err != nil {
		return nil, 0, 0, err
	}
	return logits, n, classes, nil
}
