package train

import (
	"context"
	"fmt"

	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/nn"
)

// Logits runs the model of the checkpoint at path (a ViT or a ResNet) over
// one split of its training data, in item order, through the evaluation
// pipeline, and returns its inference logits (N, C) row-major: the class
// head, or the mean of both heads for a distilled ViT. The data settings
// are the checkpoint's run configuration with sets applied (key=value, as
// --set); batch > 0 overrides data.eval_batch_size. The rows align with the
// items a run with the same data settings trains on, as
// distill.teacher_logits needs.
func Logits(path string, split data.Split, sets []string, batch int) (logits []float32, n, classes int, err error) {
	r, err := OpenEval(path, EvalOptions{Sets: sets, Batch: batch, TrainData: split == data.Train})
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
