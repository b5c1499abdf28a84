package data

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Iter walks the batches of one epoch:
//
//	it := loader.Epoch(epoch, 0)
//	defer it.Close()
//	for it.Next() {
//		b := it.Batch()
//		// ... use b.Images (N, C, H, W), b.Labels (N,)
//		b.Release()
//	}
//	if err := it.Err(); err != nil { ... }
type Iter struct {
	l     *Loader
	epoch int
	order []int

	jobs  chan job
	ready chan *Batch
	slots chan struct{}
	quit  chan struct{}
	wg    sync.WaitGroup

	cur    *Batch
	err    error
	closed bool
	waited time.Duration // time Next spent waiting for batches
}

// job is one item to fill: slot j of batch b.
type job struct {
	b *Batch
	j int
}

// Epoch starts the workers for an epoch, beginning at batch start (0 for a
// whole epoch; k resumes before batch k exactly).
func (l *Loader) Epoch(epoch, start int) *Iter {
	it := &Iter{
		l: l, epoch: epoch,
		jobs:  make(chan job, l.cfg.BatchSize),
		ready: make(chan *Batch, l.cfg.Prefetch),
		slots: make(chan struct{}, l.cfg.Prefetch),
		quit:  make(chan struct{}),
	}
	if start < 0 || start > l.NumBatches() {
		it.err = fmt.Errorf("data: loader: start batch %d outside [0, %d]", start, l.NumBatches())
		it.closed = true
		return it
	}
	it.order = l.order(epoch)
	it.wg.Add(1 + l.cfg.Workers)
	go it.dispatch(start)
	for range l.cfg.Workers {
		go it.work()
	}
	return it
}

// dispatch sends the items of batches start, start+1, … to the workers,
// holding at most Prefetch batches in flight.
func (it *Iter) dispatch(start int) {
	defer it.wg.Done()
	defer close(it.jobs)
	defer close(it.ready)
	l := it.l
	bs, n := l.cfg.BatchSize, len(it.order)
	for k := start; k < l.NumBatches(); k++ {
		select {
		case it.slots <- struct{}{}:
		case <-it.quit:
			return
		}
		lo, hi := k*bs, min((k+1)*bs, n)
		b := l.getBatch()
		b.N, b.Epoch, b.Index, b.seed, b.err = hi-lo, it.epoch, k, l.cfg.Seed, nil
		size := b.C * b.H * b.W
		b.Images, b.Labels, b.Indices = b.buf[:b.N*size], b.labels[:b.N], b.idx[:b.N]
		copy(b.Indices, it.order[lo:hi])
		b.pending = int32(b.N)
		b.done = make(chan struct{})
		it.ready <- b // never blocks: ready has Prefetch places, one per slot
		for j := range b.N {
			select {
			case it.jobs <- job{b, j}:
			case <-it.quit:
				return
			}
		}
	}
}

// work fills batch slots until the jobs run out or the iterator closes.
func (it *Iter) work() {
	defer it.wg.Done()
	l := it.l
	var pcg rand.PCG
	rng := rand.New(&pcg)
	for {
		var jb job
		var ok bool
		select {
		case jb, ok = <-it.jobs:
			if !ok {
				return
			}
		case <-it.quit:
			return
		}
		b, j := jb.b, jb.j
		idx := b.Indices[j]
		size := b.C * b.H * b.W
		pcg.Seed(streamSeed(b.seed, l.itemStream(b.Index*l.cfg.BatchSize+j), b.Epoch, idx))
		label, err := l.loadItem(idx, rng, b.Images[j*size:(j+1)*size])
		b.Labels[j] = label
		if err != nil {
			b.setErr(fmt.Errorf("data: epoch %d batch %d item %d (dataset index %d): %w", b.Epoch, b.Index, j, idx, err))
		}
		if atomic.AddInt32(&b.pending, -1) == 0 {
			close(b.done)
		}
	}
}

// loadItem reads dataset item idx and runs the pipeline on it into dst,
// converting only what the pipeline reads when the dataset is a
// SourceDataset. It returns the item's label.
func (l *Loader) loadItem(idx int, rng *rand.Rand, dst []float32) (int, error) {
	if sd, ok := l.cfg.Dataset.(SourceDataset); ok {
		src, label, err := sd.ItemSource(idx)
		if err != nil {
			return 0, err
		}
		defer src.Release()
		return label, l.cfg.Pipeline.ProcessSource(src, rng, dst)
	}
	img, label, err := l.cfg.Dataset.Item(idx)
	if err != nil {
		return 0, err
	}
	return label, l.cfg.Pipeline.Process(img, rng, dst)
}

// Next waits for the next batch; it returns false at the end of the epoch or
// on an error (see Err).
func (it *Iter) Next() bool {
	if it.closed {
		return false
	}
	start := time.Now()
	defer func() { it.waited += time.Since(start) }()
	b, ok := <-it.ready
	if !ok {
		it.Close()
		return false
	}
	<-b.done
	<-it.slots
	if b.err != nil {
		it.err = b.err
		b.Release()
		it.Close()
		return false
	}
	it.cur = b
	return true
}

// Waited returns how long Next has waited so far, in all, for the workers
// to finish batches: the time a consumer that calls Next as soon as it is
// done with a batch spent idle for want of data.
func (it *Iter) Waited() time.Duration { return it.waited }

// Batch returns the batch of the last successful Next. The caller releases
// it.
func (it *Iter) Batch() *Batch { return it.cur }

// Err returns the error that ended the epoch, if any.
func (it *Iter) Err() error { return it.err }

// Close stops the workers and waits for them; batches not yet handed out
// return to the loader. Safe to call more than once.
func (it *Iter) Close() {
	if it.closed {
		return
	}
	it.closed = true
	close(it.quit)
	it.wg.Wait()
	for b := range it.ready {
		it.l.putBatch(b)
	}
}
