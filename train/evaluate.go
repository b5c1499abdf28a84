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
	inf, err := nn.NewInference(g)
	if err != nil {
		return Evaluation{}, fmt.Errorf("evaluate: %w", err)
	}
	classes := g.Logits.Shape()[1]
	avg := NewScorer(classes)
	var cls, dist *Scorer
	if g.DistLogits != nil {
		cls, dist = NewScorer(classes), NewScorer(classes)
	}
	var head []float32
	err = inferEpoch(ctx, inf, l, func(b inferred) error {
		if err := checkLabels(b.labels, classes, b.index); err != nil {
			return err
		}
		avg.Add(b.logits, b.labels)
		if cls != nil {
			k := len(b.logits)
			head = g.HeadLogits(g.Logits, head)
			cls.Add(head[:k], b.labels)
			head = g.HeadLogits(g.DistLogits, head)
			dist.Add(head[:k], b.labels)
		}
		return nil
	})
	if err != nil {
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

// inferred is one batch of an inferEpoch: its inference logits (n,
// classes), labels (n) and dataset items (n), and its index in the epoch.
// The slices are valid during the callback only.
type inferred struct {
	logits          []float32
	labels, indices []int
	index           int
}

// inferEpoch runs inf over epoch 0 of l, batch by batch, and hands each
// batch's logits to use. The loader's batches must fit the graph (see
// checkFits). A cancelled ctx stops it before its next batch, with an
// error that wraps ctx.Err() and counts the images run.
func inferEpoch(ctx context.Context, inf *nn.Inference, l *data.Loader, use func(inferred) error) error {
	if err := checkFits(inf.Graph(), l); err != nil {
		return err
	}
	it := l.Epoch(0, 0)
	defer it.Close()
	var b inferred
	done := 0
	for {
		if ctx.Err() != nil {
			return fmt.Errorf("evaluation stopped after %d of %d images: %w", done, l.Len(), ctx.Err())
		}
		if !it.Next() {
			break
		}
		batch := it.Batch()
		b.labels = append(b.labels[:0], batch.Labels[:batch.N]...)
		b.indices = append(b.indices[:0], batch.Indices[:batch.N]...)
		b.index = batch.Index
		released := false
		logits, err := inf.Run(batch.N, func(images []float32) error {
			copy(images, batch.Images)
			batch.Release() // the loader refills it while the graph runs
			released = true
			return nil
		})
		if !released {
			batch.Release()
		}
		if err != nil {
			return err
		}
		b.logits = logits
		if err := use(b); err != nil {
			return err
		}
		done += len(b.labels)
	}
	return it.Err()
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

// evaluator scores a run's model at the end of each epoch, on every rank
// (each its share of the evaluation data, the counts summed).
type evaluator struct {
	comm   comm.Communicator
	loader *data.Loader // the evaluation data, this rank's share
	model  *nn.Graph    // the model's evaluation graph
	ema    *nn.Graph    // the EMA weights'; nil without EMA
	// buffers are the tensors besides the parameters that each rank
	// updates from its own shard (a ResNet's batch-norm running
	// statistics), rank 0's broadcast before each evaluation; nil for one
	// process and for a ViT.
	buffers [][]float32
	hook    func(ctx context.Context, g *nn.Graph, l *data.Loader) (Evaluation, error) // Hooks.Evaluate
}

// epoch scores the model and, with EMA, the EMA weights, after giving
// every rank rank 0's buffers.
func (e *evaluator) epoch(ctx context.Context) (Evaluation, *Result, error) {
	if err := e.syncBuffers(); err != nil {
		return Evaluation{}, nil, err
	}
	ev, err := e.score(ctx, e.model)
	if err != nil || e.ema == nil {
		return ev, nil, err
	}
	er, err := e.score(ctx, e.ema)
	if err != nil {
		return ev, nil, err
	}
	return ev, &er.Result, nil
}

// score scores g: Hooks.Evaluate when set, else across.
func (e *evaluator) score(ctx context.Context, g *nn.Graph) (Evaluation, error) {
	if e.hook != nil {
		return e.hook(e.context(ctx), g, e.loader)
	}
	return e.across(ctx, g)
}

// across is Evaluate of g over each rank's share of the evaluation data,
// its counts summed across the ranks.
func (e *evaluator) across(ctx context.Context, g *nn.Graph) (Evaluation, error) {
	return evaluateAcross(e.context(ctx), e.comm, g, e.loader)
}

// context is the context of an evaluation: ctx for one process; for
// several, one that is never cancelled, since an evaluation is a sequence
// of collectives that every rank must finish (a stop is agreed at the next
// step boundary instead).
func (e *evaluator) context(ctx context.Context) context.Context {
	if e.comm.Size() > 1 {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// syncBuffers gives every rank rank 0's buffers. A ViT has none.
func (e *evaluator) syncBuffers() error {
	if len(e.buffers) == 0 {
		return nil
	}
	if err := comm.BroadcastTensors(e.comm, e.buffers, 0); err != nil {
		return fmt.Errorf("broadcasting rank 0's batch-norm statistics: %w", err)
	}
	return nil
}
