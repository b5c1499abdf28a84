package train

import (
	"fmt"
	"time"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/distill"
	"github.com/vit-train/vit-train/model"
)

// newTrainLoader is the training loader of cfg over ds for rank of
// replicas: shuffled, full batches, the run's seed, workers and repeated
// augmentation.
func newTrainLoader(cfg Config, ds data.Dataset, p augment.Pipeline, rank, replicas int) (*data.Loader, error) {
	return data.NewLoader(data.LoaderConfig{Dataset: ds, BatchSize: cfg.Data.BatchSize, DropLast: true,
		Shuffle: true, Seed: cfg.Seed, Workers: cfg.Data.Workers, Pipeline: p, Rank: rank, Replicas: replicas,
		RepeatedAug: cfg.Data.RepeatedAug})
}

// newMixup is DeiT's Mixup/CutMix (lam corrected for clipped boxes) with
// the run's alphas, probabilities and smoothing, or nil when both alphas
// are 0.
func newMixup(a AugConfig, classes int) *augment.Mixup {
	if a.Mixup <= 0 && a.CutMix <= 0 {
		return nil
	}
	m := augment.NewDeiTMixup(classes)
	m.MixupAlpha, m.CutmixAlpha, m.Prob, m.SwitchProb, m.LabelSmoothing = a.Mixup, a.CutMix, a.MixupProb, a.SwitchProb, a.Smoothing
	return &m
}

// fillInputs writes a batch into the training step's inputs: its images,
// mixed by mix when set, their soft targets (smoothed by smoothing
// without mix) and, with a teacher, the teacher's logits for the images as
// mixed.
func fillInputs(b *data.Batch, in Inputs, mix *augment.Mixup, smoothing float64, teacher distill.Teacher) error {
	info := augment.MixInfo{Lam: 1}
	var err error
	if mix != nil {
		info, err = b.Mix(*mix, in.Targets)
	} else {
		err = b.OneHot(in.Classes, smoothing, in.Targets)
	}
	if err != nil {
		return err
	}
	if len(b.Images) != len(in.Images) {
		return fmt.Errorf("data: batch %d of epoch %d holds %d values, the training graph takes %d", b.Index, b.Epoch+1, len(b.Images), len(in.Images))
	}
	copy(in.Images, b.Images)
	if teacher == nil {
		return nil
	}
	return teacher.Fill(in.Images, b.Indices[:b.N], info, in.Teacher)
}

// TrainingBatches are the micro-batches of a run's training data as the
// training loop fills them (its loader, pipeline, Mixup/CutMix and
// smoothing; no teacher: Fill leaves Inputs.Teacher as it is), epoch after
// epoch from the first, for timing the step on real data.
type TrainingBatches struct {
	loader *data.Loader
	it     *data.Iter
	epoch  int
	mix    *augment.Mixup
	smooth float64
	waited time.Duration // by the iterators of earlier epochs
}

// NewTrainingBatches opens cfg's training data for rank of replicas, for
// a model of spec, which must take the data.
func NewTrainingBatches(cfg Config, spec model.Spec, rank, replicas int) (*TrainingBatches, error) {
	ds, err := OpenDatasets(cfg.Data)
	if err != nil {
		return nil, err
	}
	if err := ds.CheckModel(spec); err != nil {
		return nil, err
	}
	_, size := spec.Input()
	trainP, _, err := Pipelines(cfg.Aug, size, ds.Mean, ds.Std)
	if err != nil {
		return nil, err
	}
	l, err := newTrainLoader(cfg, ds.Train, trainP, rank, replicas)
	if err != nil {
		return nil, err
	}
	if l.NumBatches() < 1 {
		return nil, fmt.Errorf("config: data.batch_size = %d: an epoch of %d training images holds no batch", cfg.Data.BatchSize, l.Len())
	}
	return &TrainingBatches{loader: l, mix: newMixup(cfg.Aug, spec.NumClasses()), smooth: cfg.Aug.Smoothing}, nil
}

// Fill writes the next batch into in, starting the next epoch at the end
// of one.
func (tb *TrainingBatches) Fill(in Inputs) (int, error) {
	for {
		if tb.it == nil {
			tb.it = tb.loader.Epoch(tb.epoch, 0)
		}
		if tb.it.Next() {
			b := tb.it.Batch()
			n, err := b.N, fillInputs(b, in, tb.mix, tb.smooth, nil)
			b.Release()
			return n, err
		}
		if err := tb.it.Err(); err != nil {
			return 0, err
		}
		tb.waited += tb.it.Waited()
		tb.it.Close()
		tb.it, tb.epoch = nil, tb.epoch+1
	}
}

// Waited returns how long Fill has waited for the loader's batches.
func (tb *TrainingBatches) Waited() time.Duration {
	if tb.it == nil {
		return tb.waited
	}
	return tb.waited + tb.it.Waited()
}

// Close stops the loader's workers.
func (tb *TrainingBatches) Close() {
	if tb.it != nil {
		tb.it.Close()
		tb.it = nil
	}
}
