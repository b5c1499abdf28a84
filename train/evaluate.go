package train

import (
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/model"
)

// Evaluate runs an evaluation graph over a loader's epoch 0 and scores the
// model's inference logits (the mean of both heads for a distilled model).
// A last batch smaller than the graph's is padded with zeros and scored on
// its real images only.
func Evaluate(g *model.Graph, l *data.Loader, classes int) (Result, error) {
	sc := NewScorer(classes)
	err := forEachBatch(g, l, func(logits []float32, labels []int) { sc.Add(logits, labels) })
	return sc.Result(), err
}

// forEachBatch feeds every batch of l to g and calls fn with the inference
// logits (N, classes) and labels (N) of the batch's real images.
func forEachBatch(g *model.Graph, l *data.Loader, fn func(logits []float32, labels []int)) error {
	it := l.Epoch(0, 0)
	defer it.Close()
	images := g.ImageData.([]float32)
	var logits []float32
	labels := make([]int, 0, g.Batch)
	classes := g.Model.Config.NumClasses
	for it.Next() {
		b := it.Batch()
		n := copy(images, b.Images[:b.N*b.C*b.H*b.W])
		clear(images[n:])
		labels = append(labels[:0], b.Labels[:b.N]...)
		b.Release()
		if err := g.Run(); err != nil {
			return err
		}
		logits = g.Predictions(logits)
		fn(logits[:len(labels)*classes], labels)
	}
	return it.Err()
}
