package train

import (
	"fmt"

	"github.com/vit-train/vit-train/data"
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
	g, l, classes := r.Graph, r.Loader, r.Net.Spec().NumClasses()
	n = r.Items.Len()
	logits = make([]float32, n*classes)
	images, err := g.Float32Images()
	if err != nil {
		return nil, 0, 0, err
	}
	var rows []float32
	it := l.Epoch(0, 0)
	defer it.Close()
	for it.Next() {
		b := it.Batch()
		k := copy(images, b.Images[:b.N*b.C*b.H*b.W])
		clear(images[k:])
		idx := append([]int(nil), b.Indices[:b.N]...)
		b.Release()
		if err := g.Run(); err != nil {
			return nil, 0, 0, err
		}
		rows = g.Predictions(rows)
		for i, j := range idx {
			if j < 0 || j >= n {
				return nil, 0, 0, fmt.Errorf("logits: item %d outside the %d items", j, n)
			}
			copy(logits[j*classes:(j+1)*classes], rows[i*classes:(i+1)*classes])
		}
	}
	if err := it.Err(); err != nil {
		return nil, 0, 0, err
	}
	return logits, n, classes, nil
}
