package data

import (
	"math/rand/v2"
	"sync"

	"github.com/vit-train/vit-train/augment"
)

// Batch is one batch of normalised images and their labels. Batches are
// recycled: call Release when done with one, after which its slices must not
// be used.
type Batch struct {
	Images  []float32 // (N, C, H, W)
	Labels  []int     // (N,)
	Indices []int     // (N,) dataset indices of the items
	N       int       // items in this batch (BatchSize, or fewer in a last batch without DropLast)
	C, H, W int       // image size of every item
	Epoch   int       // epoch the batch belongs to
	Index   int       // batch index within the epoch

	loader *Loader
	seed   uint64
	pcg    rand.PCG
	rng    *rand.Rand
	buf    []float32
	labels []int
	idx    []int

	done    chan struct{}
	pending int32
	mu      sync.Mutex
	err     error
}

// Release hands the batch back to its loader for reuse.
func (b *Batch) Release() {
	if b.loader != nil {
		b.loader.putBatch(b)
	}
}

// RNG returns the batch's random stream, derived from (seed, epoch, batch
// index) and restarted at each call, for batch-level augmentation. It is
// owned by the batch.
func (b *Batch) RNG() *rand.Rand {
	b.pcg.Seed(streamSeed(b.seed, streamBatch, b.Epoch, b.Index))
	return b.rng
}

// Mix applies Mixup/CutMix to the batch's images in place and writes the soft
// targets (N, m.Classes) into targets, with the batch's RNG.
func (b *Batch) Mix(m augment.Mixup, targets []float32) (augment.MixInfo, error) {
	return m.Apply(b.Images, b.C, b.H, b.W, b.Labels, targets, b.RNG())
}

// OneHot writes label-smoothed one-hot targets (N, classes) into dst (see
// augment.OneHot).
func (b *Batch) OneHot(classes int, smoothing float64, dst []float32) error {
	return augment.OneHot(b.Labels, classes, smoothing, dst)
}

func (b *Batch) setErr(err error) {
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.mu.Unlock()
}
