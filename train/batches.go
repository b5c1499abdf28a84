package train

import (
	"fmt"
	"time"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/comm"
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/distill"
	"github.com/vit-train/vit-train/model"
)

// BatchSource is one rank's training micro-batches, as the optimiser step
// takes them (MicroBatches): each Fill writes the loader's next batch of
// data.batch_size images (B, C, H, W), cropped and flipped by the training
// pipeline, into the step's inputs, with its soft targets (B, classes)
// from Mixup/CutMix or smoothed one-hot labels, and, with a teacher, the
// teacher's logits (B, classes) for the images as mixed. Run's loop and
// `vit-train bench --data` take their steps from one.
type BatchSource struct {
	loader    *data.Loader
	mix       *augment.Mixup  // nil without Mixup/CutMix
	smoothing float64         // label smoothing of one-hot targets (without mix)
	teacher   distill.Teacher // nil: Fill leaves Inputs.Teacher as it is
	// Repeat makes Fill go on into the next epoch at the end of one, for
	// steps that run past an epoch (bench). Without it the end of an epoch
	// is an error: Run's loop starts each epoch with Seek and takes no
	// more than its batches.
	Repeat bool

	it           *data.Iter    // the current epoch's; nil before the first Fill or Seek
	epoch, batch int           // the position of the next batch
	waited       time.Duration // by the iterators of earlier epochs
}

// NewBatchSource opens the training micro-batches of cfg over ds.Train for
// a model of spec (which must take the data: Datasets.CheckModel), with
// teacher's logits (nil without distillation), for rank c.Rank() of the
// data-parallel job c (nil: one process): the training loader (shuffled,
// full batches, the run's seed, workers and repeated augmentation) and
// Mixup/CutMix. Filling starts at epoch 0, batch 0.
func NewBatchSource(cfg Config, ds *Datasets, spec model.Spec, teacher distill.Teacher, c comm.Communicator) (*BatchSource, error) {
	if c == nil {
		c = comm.Local()
	}
	_, size := spec.Input()
	trainP, _, err := Pipelines(cfg.Aug, size, ds.Mean, ds.Std)
	if err != nil {
		return nil, err
	}
	l, err := data.NewLoader(data.LoaderConfig{Dataset: ds.Train, BatchSize: cfg.Data.BatchSize, DropLast: true,
		Shuffle: true, Seed: cfg.Seed, Workers: cfg.Data.Workers, Pipeline: trainP, Rank: c.Rank(), Replicas: c.Size(),
		RepeatedAug: cfg.Data.RepeatedAug})
	if err != nil {
		return nil, err
	}
	if err := checkHoldsABatch(cfg.Data, l, ds.Train.Len(), c.Size()); err != nil {
		return nil, err
	}
	return &BatchSource{loader: l, mix: newMixup(cfg.Aug, spec.NumClasses()), smoothing: cfg.Aug.Smoothing, teacher: teacher}, nil
}

// checkHoldsABatch reports a training loader l over n images, for a job of
// ranks processes, whose epochs hold no batch.
func checkHoldsABatch(d DataConfig, l *data.Loader, n, ranks int) error {
	switch {
	case l.NumBatches() >= 1:
		return nil
	case d.RepeatedAug > 1:
		return fmt.Errorf("config: data.repeated_aug = %d: an epoch keeps %d of the %d training images (a multiple of 256, shared by %d process(es)), fewer than data.batch_size = %d", d.RepeatedAug, l.Len()*max(1, ranks), n, max(1, ranks), d.BatchSize)
	}
	if ranks > 1 {
		return fmt.Errorf("config: data.batch_size = %d is larger than the %d of the %d training images that each of the %d processes reads: set data.batch_size = %d or less", d.BatchSize, l.Len(), n, ranks, l.Len())
	}
	return fmt.Errorf("config: data.batch_size = %d is larger than the %d training images: set data.batch_size = %d or less", d.BatchSize, n, n)
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

// NumBatches is the number of batches of each epoch.
func (s *BatchSource) NumBatches() int { return s.loader.NumBatches() }

// Seek makes the next Fill take batch batch of epoch epoch: the start of
// an epoch, or a resumed run's position in it.
func (s *BatchSource) Seek(epoch, batch int) {
	s.closeEpoch()
	s.epoch, s.batch = epoch, batch
	s.it = s.loader.Epoch(epoch, batch)
}

// Fill writes the next batch into in (see fill) and returns its number of
// images. The batch goes back to the loader before Fill returns.
func (s *BatchSource) Fill(in Inputs) (int, error) {
	if s.it == nil {
		s.Seek(s.epoch, s.batch)
	}
	for !s.it.Next() {
		if err := s.it.Err(); err != nil {
			return 0, err
		}
		if !s.Repeat {
			return 0, fmt.Errorf("data: epoch %d ended at batch %d, before its last optimiser step", s.epoch+1, s.batch)
		}
		s.Seek(s.epoch+1, 0)
	}
	b := s.it.Batch()
	n, err := b.N, s.fill(b, in)
	b.Release()
	s.batch++
	return n, err
}

// fill writes batch b into the step's inputs: its images, mixed by s.mix
// when set, their soft targets (smoothed one-hot labels without mix) and,
// with a teacher, the teacher's logits for the images as mixed.
func (s *BatchSource) fill(b *data.Batch, in Inputs) error {
	info := augment.MixInfo{Lam: 1}
	var err error
	if s.mix != nil {
		info, err = b.Mix(*s.mix, in.Targets)
	} else {
		err = b.OneHot(in.Classes, s.smoothing, in.Targets)
	}
	if err != nil {
		return err
	}
	if len(b.Images) != len(in.Images) {
		return fmt.Errorf("data: batch %d of epoch %d holds %d values, the training graph takes %d", b.Index, b.Epoch+1, len(b.Images), len(in.Images))
	}
	copy(in.Images, b.Images)
	if s.teacher == nil {
		return nil
	}
	return s.teacher.Fill(in.Images, b.Indices[:b.N], info, in.Teacher)
}

// Waited returns how long Fill has waited, in all, for the loader's
// batches.
func (s *BatchSource) Waited() time.Duration {
	if s.it == nil {
		return s.waited
	}
	return s.waited + s.it.Waited()
}

// closeEpoch stops the current epoch's iterator, if any, keeping its wait.
func (s *BatchSource) closeEpoch() {
	if s.it != nil {
		s.waited += s.it.Waited()
		s.it.Close()
		s.it = nil
	}
}

// Close stops the loader's workers; a later Fill or Seek starts them
// again.
func (s *BatchSource) Close() { s.closeEpoch() }
