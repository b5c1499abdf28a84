package data

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/vit-train/vit-train/augment"
)

// LoaderConfig configures a Loader.
type LoaderConfig struct {
	Dataset   Dataset // items to load
	BatchSize int     // items per batch
	DropLast  bool    // drop the last incomplete batch
	Shuffle   bool    // a new seeded order every epoch
	Seed      uint64  // seeds the order and every item's augmentation
	Workers   int     // goroutines decoding and augmenting; 0: GOMAXPROCS
	Prefetch  int     // batches being filled or ready ahead of the consumer; 0: 2
	// Pipeline turns each item into the model input (transform, normalise,
	// post-normalisation). Its Height/Width give the output size; 0 takes the
	// dataset's fixed size.
	Pipeline augment.Pipeline

	// Rank and Replicas shard every epoch across the ranks of a
	// data-parallel job: the loader keeps rank Rank's share of the epoch
	// order (every rank draws the same order from Seed). Replicas 0 or 1
	// does not shard. The share is [DistributedShard]'s, padded so that
	// every rank gets as many items (DistributedSampler), or with
	// UnevenShards order[Rank::Replicas], for evaluations whose counts are
	// summed across the ranks. Augmentation stays seeded by (Seed, epoch,
	// dataset index), so N ranks with batches of b items see, batch by
	// batch, the items and augmentations one process with batches of N·b
	// items sees.
	Rank, Replicas int
	// UnevenShards gives rank r the items order[r::Replicas], without
	// padding: shares differ in length by at most one item.
	UnevenShards bool
	// RepeatedAug > 1 is DeiT's repeated augmentation (RASampler, DeiT
	// uses 3): each item of the epoch order appears RepeatedAug times in a
	// row before sharding, the shares are [RepeatedAugShard]'s, and each
	// copy of an item is augmented with its own random stream (see
	// [RepeatedAugCopy]); the first copy's stream is the one the item has
	// without repetition. An epoch then holds len//256·256 items in all.
	// 0 or 1 is off; it cannot be combined with UnevenShards.
	RepeatedAug int
}

// Loader produces batches of a dataset, epoch by epoch. Item i of epoch e is
// augmented with a random stream seeded from (Seed, e, i), so the batches of
// an epoch do not depend on the number of workers.
type Loader struct {
	cfg     LoaderConfig
	c, h, w int

	mu   sync.Mutex
	free []*Batch // batches back in the pool
	made int      // batches allocated
}

// NewLoader checks cfg and returns a loader.
func NewLoader(cfg LoaderConfig) (*Loader, error) {
	if cfg.Dataset == nil {
		return nil, fmt.Errorf("data: loader: no dataset")
	}
	if cfg.BatchSize <= 0 {
		return nil, fmt.Errorf("data: loader: BatchSize = %d, want > 0", cfg.BatchSize)
	}
	if cfg.Replicas > 1 || cfg.Rank != 0 {
		if err := checkRank(cfg.Rank, max(cfg.Replicas, 1)); err != nil {
			return nil, fmt.Errorf("data: loader: %w", err)
		}
	}
	if cfg.RepeatedAug < 0 || (cfg.RepeatedAug > 1 && cfg.UnevenShards) {
		return nil, fmt.Errorf("data: loader: RepeatedAug = %d: want 0 or more, and no repetition with UnevenShards", cfg.RepeatedAug)
	}
	if cfg.Workers < 0 || cfg.Prefetch < 0 {
		return nil, fmt.Errorf("data: loader: Workers = %d and Prefetch = %d must not be negative", cfg.Workers, cfg.Prefetch)
	}
	if cfg.Workers == 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.Prefetch == 0 {
		cfg.Prefetch = 2
	}
	c, h, w := cfg.Dataset.Shape()
	if cfg.Pipeline.Height > 0 || cfg.Pipeline.Width > 0 {
		h, w = cfg.Pipeline.Height, cfg.Pipeline.Width
	}
	if c <= 0 || h <= 0 || w <= 0 {
		return nil, fmt.Errorf("data: loader: output size (C, H, W) = (%d, %d, %d) unknown; set Pipeline.Height and Width for datasets of varying image size", c, h, w)
	}
	return &Loader{cfg: cfg, c: c, h: h, w: w}, nil
}

// NumBatches returns the number of batches per epoch (of this rank's share
// when sharded).
func (l *Loader) NumBatches() int {
	n, b := l.Len(), l.cfg.BatchSize
	if l.cfg.DropLast {
		return n / b
	}
	return (n + b - 1) / b
}

// Len returns the number of items of an epoch: the dataset's, or this
// rank's share of it when sharded.
func (l *Loader) Len() int {
	n, r, k := l.cfg.Dataset.Len(), l.cfg.Rank, l.cfg.Replicas
	switch {
	case l.cfg.RepeatedAug > 1:
		return n / 256 * 256 / max(k, 1)
	case k <= 1 || n == 0:
		return n
	case l.cfg.UnevenShards:
		return max(0, (n-r+k-1)/k)
	default:
		return (n + k - 1) / k
	}
}

// BatchShape returns the (C, H, W) of every image of a batch.
func (l *Loader) BatchShape() (c, h, w int) { return l.c, l.h, l.w }

// Config returns the loader's configuration with defaults filled in.
func (l *Loader) Config() LoaderConfig { return l.cfg }

// order returns the dataset indices of an epoch in batch order: this rank's
// share of the epoch's permutation when sharded.
func (l *Loader) order(epoch int) []int {
	idx := l.permutation(epoch)
	r, k := l.cfg.Rank, l.cfg.Replicas
	switch {
	case l.cfg.RepeatedAug > 1:
		// NewLoader checked the rank and the repeats.
		share, _ := RepeatedAugShard(idx, r, max(k, 1), l.cfg.RepeatedAug)
		return share
	case k <= 1:
		return idx
	case l.cfg.UnevenShards:
		share := make([]int, 0, l.Len())
		for i := r; i < len(idx); i += k {
			share = append(share, idx[i])
		}
		return share
	default:
		// NewLoader checked the rank.
		share, _ := DistributedShard(idx, r, k, false)
		return share
	}
}

// permutation returns the dataset indices of an epoch, shuffled when
// configured: the same on every rank.
func (l *Loader) permutation(epoch int) []int {
	n := l.cfg.Dataset.Len()
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	if l.cfg.Shuffle {
		rng := rand.New(rand.NewPCG(streamSeed(l.cfg.Seed, streamShuffle, epoch, 0)))
		rng.Shuffle(n, func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	}
	return idx
}

// getBatch takes a free batch or allocates one.
func (l *Loader) getBatch() *Batch {
	l.mu.Lock()
	if k := len(l.free); k > 0 {
		b := l.free[k-1]
		l.free = l.free[:k-1]
		l.mu.Unlock()
		return b
	}
	l.made++
	l.mu.Unlock()
	bs, size := l.cfg.BatchSize, l.c*l.h*l.w
	b := &Batch{loader: l, C: l.c, H: l.h, W: l.w, buf: make([]float32, bs*size), labels: make([]int, bs), idx: make([]int, bs)}
	b.rng = rand.New(&b.pcg)
	return b
}

// putBatch returns a batch to the pool. A batch already there (released
// twice) is not added again, so that it is never handed out twice.
func (l *Loader) putBatch(b *Batch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.free {
		if f == b {
			return
		}
	}
	l.free = append(l.free, b)
}

// Outstanding is the number of the loader's batches not in its pool: handed
// out and not yet released, or being filled by an open Iter. Once every
// Iter is closed and every batch released it is 0; a larger value is a
// batch that was never released.
func (l *Loader) Outstanding() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.made - len(l.free)
}

// itemStream is the random stream that augments the element at position
// pos of this rank's epoch order: streamItem, or with repeated
// augmentation one stream per copy of an item.
func (l *Loader) itemStream(pos int) uint64 {
	if l.cfg.RepeatedAug <= 1 {
		return streamItem
	}
	return streamItem + uint64(RepeatedAugCopy(pos, l.cfg.Rank, max(l.cfg.Replicas, 1), l.cfg.RepeatedAug))
}
