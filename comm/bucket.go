package comm

import "fmt"

// DefaultBucketBytes is the bucket size of [Buckets] when none is given:
// 25 MiB, the bucket_cap_mb default of PyTorch's DistributedDataParallel.
//
// Keep buckets under 32 MiB with Open MPI over shared memory: its in-place
// allreduce mallocs a message-sized temporary on every call, and glibc serves
// allocations above 32 MiB with a fresh mmap each time, whose page faults
// dominate the call (measured: 64 MB between 2 ranks at 0.35 GB/s, against
// 3.6 GB/s with MALLOC_MMAP_MAX_=0 in the environment, which keeps such
// temporaries on malloc's heap).
const DefaultBucketBytes = 25 << 20

// Buckets groups parameter tensors of sizes[i] float32 elements into buckets
// of about bucketBytes bytes for allreduce, as DistributedDataParallel does:
// tensors are taken in reverse order, because the backward pass produces the
// gradients of the last layers first, and a bucket is closed as soon as it
// holds bucketBytes or more, so a bucket exceeds the cap by less than one
// tensor and a tensor larger than the cap has a bucket of its own. Each
// bucket lists the indices of its tensors in the order they were added
// (descending). bucketBytes <= 0 means [DefaultBucketBytes]. Tensors of zero
// elements are skipped; a negative size is an error.
func Buckets(sizes []int, bucketBytes int) ([][]int, error) {
	if bucketBytes <= 0 {
		bucketBytes = DefaultBucketBytes
	}
	var buckets [][]int
	var cur []int
	curBytes := 0
	for i := len(sizes) - 1; i >= 0; i-- {
		n := sizes[i]
		if n < 0 {
			return nil, fmt.Errorf("comm: buckets: tensor %d has %d elements", i, n)
		}
		if n == 0 {
			continue
		}
		cur = append(cur, i)
		curBytes += 4 * n
		if curBytes >= bucketBytes {
			buckets = append(buckets, cur)
			cur, curBytes = nil, 0
		}
	}
	if len(cur) > 0 {
		buckets = append(buckets, cur)
	}
	return buckets, nil
}

// Reducer averages the gradients of a fixed list of parameter tensors across
// the ranks of a communicator, one bucket (see [Buckets]) per allreduce, each
// packed into a flat buffer that is kept from step to step: after the first
// step, AllreduceMean allocates nothing.
//
// Two ways to use it: [Reducer.AllreduceMean] after the backward pass, or
// [Reducer.Start], [Reducer.Ready] for each tensor as the backward pass
// finishes its gradient, and [Reducer.Wait], which overlaps the reduction of
// the last layers' buckets with the backward pass of the first layers.
//
// A Reducer is used by one goroutine at a time (its background worker
// aside).
type Reducer struct {
	c        Communicator
	sizes    []int
	buckets  [][]int
	bufs     [][]float32 // one flat buffer per bucket, allocated on first use
	bucketOf []int       // tensor index -> bucket, -1 for empty tensors

	// The step started by Start.
	grads    [][]float32
	started  bool
	ready    []bool // per tensor
	missing  []int  // per bucket: tensors not yet ready
	launched int    // buckets handed to the worker, in order
	scale    float32
	work     chan int   // bucket indices to reduce
	done     chan error // one per bucket handed to the worker
}

// NewReducer returns a reducer for tensors of sizes[i] float32 elements over
// c, with buckets of about bucketBytes bytes (<= 0: [DefaultBucketBytes]).
func NewReducer(c Communicator, sizes []int, bucketBytes int) (*Reducer, error) {
	if c == nil {
		return nil, fmt.Errorf("comm: reducer: no communicator")
	}
	buckets, err := Buckets(sizes, bucketBytes)
	if err != nil {
		return nil, err
	}
	for k, b := range buckets {
		n := 0
		for _, i := range b {
			n += sizes[i]
		}
		if err := checkCount(n); err != nil {
			return nil, fmt.Errorf("comm: reducer: bucket %d: %w", k, err)
		}
	}
	bucketOf := make([]int, len(sizes))
	for i := range bucketOf {
		bucketOf[i] = -1
	}
	for k, b := range buckets {
		for _, i := range b {
			bucketOf[i] = k
		}
	}
	return &Reducer{
		c:        c,
		sizes:    append([]int(nil), sizes...),
		buckets:  buckets,
		bufs:     make([][]float32, len(buckets)),
		bucketOf: bucketOf,
		ready:    make([]bool, len(sizes)),
		missing:  make([]int, len(buckets)),
	}, nil
}

// Buckets returns the buckets of the reducer: the tensor indices of each, in
// the order they are reduced. The caller must not modify them.
func (r *Reducer) Buckets() [][]int { return r.buckets }

// AllreduceMean replaces every grads[i] by the mean over the ranks of their
// grads[i]: each bucket is packed into its flat buffer, summed across the
// ranks, divided by Size and unpacked. grads[i] must have sizes[i] elements,
// on every rank. With one rank it returns at once.
func (r *Reducer) AllreduceMean(grads [][]float32) error {
	if err := r.check(grads); err != nil {
		return err
	}
	size := r.c.Size()
	if size == 1 {
		return nil
	}
	scale := 1 / float32(size)
	for k := range r.buckets {
		if err := r.reduceBucket(k, grads, scale); err != nil {
			return err
		}
	}
	return nil
}

// check returns an error unless grads fit the reducer's sizes.
func (r *Reducer) check(grads [][]float32) error {
	if len(grads) != len(r.sizes) {
		return fmt.Errorf("comm: reducer: %d gradient tensors, want %d", len(grads), len(r.sizes))
	}
	for i, g := range grads {
		if len(g) != r.sizes[i] {
			return fmt.Errorf("comm: reducer: gradient %d has %d elements, want %d", i, len(g), r.sizes[i])
		}
	}
	return nil
}

// reduceBucket packs bucket k of grads, allreduces it and unpacks it scaled.
func (r *Reducer) reduceBucket(k int, grads [][]float32, scale float32) error {
	buf := r.pack(k, grads)
	if err := r.c.AllreduceSumFloat32(buf); err != nil {
		return fmt.Errorf("comm: reducer: bucket %d of %d: %w", k, len(r.buckets), err)
	}
	off := 0
	for _, i := range r.buckets[k] {
		g := grads[i]
		src := buf[off : off+len(g)]
		for j, v := range src {
			g[j] = v * scale
		}
		off += len(g)
	}
	return nil
}

// pack copies the gradients of bucket k into its flat buffer, allocating the
// buffer on first use.
func (r *Reducer) pack(k int, grads [][]float32) []float32 {
	buf := r.bufs[k]
	if buf == nil {
		n := 0
		for _, i := range r.buckets[k] {
			n += r.sizes[i]
		}
		buf = make([]float32, n)
		r.bufs[k] = buf
	}
	off := 0
	for _, i := range r.buckets[k] {
		off += copy(buf[off:], grads[i])
	}
	return buf
}

// Start begins an overlapped reduction of grads (see [Reducer.AllreduceMean]
// for its result). The caller then calls Ready(i) once for every tensor i as
// soon as grads[i] is final, in any order, and finally Wait. grads must have
// one entry per tensor; entry i may be set (to sizes[i] elements) as late as
// just before Ready(i). A bucket is
// reduced by a background goroutine once all its tensors are ready and every
// bucket before it has been handed over, so the ranks reduce the buckets in
// the same order whatever the order of their Ready calls. Between Start and
// Wait the caller must not touch a ready tensor, nor issue other collective
// operations on the communicator.
func (r *Reducer) Start(grads [][]float32) error {
	if r.started {
		return fmt.Errorf("comm: reducer: Start before the previous step's Wait")
	}
	if len(grads) != len(r.sizes) {
		return fmt.Errorf("comm: reducer: %d gradient tensors, want %d", len(grads), len(r.sizes))
	}
	if r.work == nil {
		r.work = make(chan int, len(r.buckets))
		r.done = make(chan error, len(r.buckets))
		go r.worker(r.work, r.done)
	}
	r.grads, r.started, r.launched = grads, true, 0
	r.scale = 1 / float32(r.c.Size())
	clear(r.ready)
	for k, b := range r.buckets {
		r.missing[k] = len(b)
	}
	return nil
}

// Ready tells the reducer that grads[i] of the step begun by Start is final.
// It packs the tensor and hands to the worker every bucket that has become
// complete in order.
func (r *Reducer) Ready(i int) error {
	if !r.started {
		return fmt.Errorf("comm: reducer: Ready(%d) outside Start and Wait", i)
	}
	if i < 0 || i >= len(r.sizes) {
		return fmt.Errorf("comm: reducer: Ready(%d): tensor index outside [0, %d)", i, len(r.sizes))
	}
	if r.ready[i] {
		return fmt.Errorf("comm: reducer: Ready(%d) called twice in one step", i)
	}
	if len(r.grads[i]) != r.sizes[i] {
		return fmt.Errorf("comm: reducer: gradient %d has %d elements, want %d", i, len(r.grads[i]), r.sizes[i])
	}
	r.ready[i] = true
	k := r.bucketOf[i]
	if k < 0 {
		return nil
	}
	r.missing[k]--
	for r.launched < len(r.buckets) && r.missing[r.launched] == 0 {
		r.pack(r.launched, r.grads)
		r.work <- r.launched
		r.launched++
	}
	return nil
}

// Wait waits for the buckets of the step begun by Start, leaving the mean
// gradients in grads. If a tensor was never marked ready, the buckets already
// handed over are still waited for (the other ranks take part in them), and
// Wait returns an error: the ranks then disagree on the collectives still to
// come, and the job should be aborted.
func (r *Reducer) Wait() error {
	if !r.started {
		return fmt.Errorf("comm: reducer: Wait without Start")
	}
	var err error
	for range r.launched {
		if e := <-r.done; e != nil && err == nil {
			err = e
		}
	}
	if err == nil && r.launched < len(r.buckets) {
		for i, ok := range r.ready {
			if !ok && r.bucketOf[i] >= 0 {
				err = fmt.Errorf("comm: reducer: Wait with tensor %d never marked ready (bucket %d of %d not reduced)", i, r.bucketOf[i], len(r.buckets))
				break
			}
		}
	}
	r.grads, r.started = nil, false
	return err
}

// Close stops the background goroutine of Start, if any. The reducer can
// still be used by AllreduceMean.
func (r *Reducer) Close() {
	if r.started {
		_ = r.Wait()
	}
	if r.work != nil {
		close(r.work)
		r.work, r.done = nil, nil
	}
}

// worker reduces the buckets it receives, in order, until work is closed.
func (r *Reducer) worker(work <-chan int, done chan<- error) {
	for k := range work {
		done <- r.reduceBucket(k, r.grads, r.scale)
	}
}
