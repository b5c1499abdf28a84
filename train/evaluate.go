package train

import (
	"context"
	"fmt"
	"slices"

	"github.com/vit-train/vit-train/comm"
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/nn"
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

// Evaluate runs an evaluation graph (float32, images (B, C, H, W), logits
// (B, classes)) over a loader's epoch 0. A last batch smaller than the
// graph's is padded with zeros and scored on its real images only. The
// loader's batches must fit the graph: at most B images of (C, H, W), with
// labels below classes; anything else is an error, as is a cancelled ctx,
// which stops the evaluation before its next batch (the error wraps
// ctx.Err(); a cancel after the last batch is not an error).
func Evaluate(ctx context.Context, g *nn.Graph, l *data.Loader) (Evaluation, error) {
	return evaluateAcross(ctx, nil, g, l)
}

// evaluateAcross is Evaluate on each rank of c of its share of the data (a
// loader sharded with UnevenShards), its counts summed across the ranks so
// that every rank returns the score of the whole data. A nil c, or one of
// one rank, is Evaluate.
func evaluateAcross(ctx context.Context, c comm.Communicator, g *nn.Graph, l *data.Loader) (Evaluation, error) {
	images, err := g.Float32Images()
	if err != nil {
		return Evaluation{}, fmt.Errorf("evaluate: %w", err)
	}
	if err := checkFits(g, l); err != nil {
		return Evaluation{}, err
	}
	classes := g.Logits.Shape()[1]
	avg := NewScorer(classes)
	var cls, dist *Scorer
	if g.DistLogits != nil {
		cls, dist = NewScorer(classes), NewScorer(classes)
	}
	it := l.Epoch(0, 0)
	defer it.Close()
	var logits, head []float32
	labels := make([]int, 0, g.Batch)
	for {
		if ctx.Err() != nil {
			return Evaluation{}, fmt.Errorf("evaluation stopped after %d of %d images: %w", avg.n, l.Len(), ctx.Err())
		}
		if !it.Next() {
			break
		}
		b := it.Batch()
		n := copy(images, b.Images[:b.N*b.C*b.H*b.W])
		clear(images[n:])
		labels = append(labels[:0], b.Labels[:b.N]...)
		index := b.Index
		b.Release()
		if err := checkLabels(labels, classes, index); err != nil {
			return Evaluation{}, err
		}
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
	if err := it.Err(); err != nil {
		return Evaluation{}, err
	}
	if c != nil && c.Size() > 1 {
		if err := allreduceScorers(c, avg, cls, dist); err != nil {
			return Evaluation{}, fmt.Errorf("evaluate: summing the ranks' scores: %w", err)
		}
	}
	ev := Evaluation{Result: avg.Result()}
	if cls != nil {
		c, d := cls.Result(), dist.Result()
		ev.ClassHead, ev.DistHead = &c, &d
	}
	return ev, nil
}

// allreduceScorers sums the counts of scorers (nil ones skipped) across the
// ranks of c: one allreduce of their integer counts, one of their losses.
func allreduceScorers(c comm.Communicator, scorers ...*Scorer) error {
	var ints []int64
	var losses []float64
	for _, s := range scorers {
		if s == nil {
			continue
		}
		ints = append(ints, int64(s.n), int64(s.top1), int64(s.top5))
		for _, v := range s.confusion {
			ints = append(ints, int64(v))
		}
		losses = append(losses, s.lossSum)
	}
	if err := c.AllreduceSumInt64(ints); err != nil {
		return err
	}
	if err := c.AllreduceSumFloat64(losses); err != nil {
		return err
	}
	k := 0
	for _, s := range scorers {
		if s == nil {
			continue
		}
		s.n, s.top1, s.top5 = int(ints[0]), int(ints[1]), int(ints[2])
		for i := range s.confusion {
			s.confusion[i] = int(ints[3+i])
		}
		ints = ints[3+len(s.confusion):]
		s.lossSum = losses[k]
		k++
	}
	return nil
}

// checkFits reports a loader whose batches do not fit an evaluation graph.
func checkFits(g *nn.Graph, l *data.Loader) error {
	shape := g.Images.Shape()
	c, h, w := l.BatchShape()
	if len(shape) != 4 || !slices.Equal([]int(shape[1:]), []int{c, h, w}) {
		return fmt.Errorf("evaluate: the loader's images are (%d, %d, %d), the graph takes %v", c, h, w, shape)
	}
	if bs := l.Config().BatchSize; bs > g.Batch {
		return fmt.Errorf("evaluate: the loader's batches hold %d images, more than the graph's batch of %d (data.eval_batch_size must not exceed the graph's)", bs, g.Batch)
	}
	return nil
}

// checkLabels reports labels outside [0, classes).
func checkLabels(labels []int, classes, batch int) error {
	for i, y := range labels {
		if y < 0 || y >= classes {
			return fmt.Errorf("evaluate: batch %d item %d has label %d, but the model has %d classes", batch, i, y, classes)
		}
	}
	return nil
}
