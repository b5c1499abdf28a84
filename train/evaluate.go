package train

import (
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/model"
)

// Evaluation is the score of a model on a dataset.
type Evaluation struct {
	// Result scores the inference logits: the class head, or for a distilled
	// model the mean of both heads (DeiT's inference rule).
	Result
	// ClassHead and DistHead score each head of a distilled model alone.
	ClassHead *Result `json:"class_head,omitempty"`
	DistHead  *Result `json:"dist_head,omitempty"`
}

// Evaluate runs an evaluation graph over a loader's epoch 0. A last batch
// smaller than the graph's is padded with zeros and scored on its real
// images only.
func Evaluate(g *model.Graph, l *data.Loader) (Evaluation, error) {
	classes := g.Logits.Shape()[1]
	avg := NewScorer(classes)
	var cls, dist *Scorer
	if g.DistLogits != nil {
		cls, dist = NewScorer(classes), NewScorer(classes)
	}
	it := l.Epoch(0, 0)
	defer it.Close()
	images := g.ImageData.([]float32)
	var logits, head []float32
	labels := make([]int, 0, g.Batch)
	for it.Next() {
		b := it.Batch()
		n := copy(images, b.Images[:b.N*b.C*b.H*b.W])
		clear(images[n:])
		labels = append(labels[:0], b.Labels[:b.N]...)
		b.Release()
		if err := g.Run(); err != nil {
			return Evaluation{}, err
		}
		k := len(labels) * classes
		logits = g.Predictions(logits)
		avg.Add(logits[:k], labels)
		if cls != nil {
			head = g.HeadLogits(g.Logits, head)
			cls.Add(head[:k], labels)
			head = g.HeadLogits(g.DistLogits, head)
			dist.Add(head[:k], labels)
		}
	}
	ev := Evaluation{Result: avg.Result()}
	if cls != nil {
		c, d := cls.Result(), dist.Result()
		ev.ClassHead, ev.DistHead = &c, &d
	}
	return ev, it.Err()
}
