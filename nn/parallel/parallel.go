// Package parallel runs loops over a pool of long-lived worker goroutines.
//
// For splits an index range into chunks that the calling goroutine and idle
// workers claim one at a time, so a loop finishes as soon as the cores that
// are free have done it, and a core that is busy elsewhere (another loop,
// another process) holds up only the chunk it has already claimed. The
// workers, GOMAXPROCS of them, are started on first use and then wait for
// work; a call allocates nothing.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// chunksPerWorker is how many chunks For aims to cut per worker, when the
// grain allows, so that uneven chunks and busy cores even out.
const chunksPerWorker = 4

// For calls fn(lo, hi) for disjoint ranges [lo, hi) that together cover
// [0, n), and returns when all have returned. Each range holds at least
// grain indices (grain < 1 counts as 1) unless n itself is smaller, and
// there are at most 4·GOMAXPROCS of them. The calls run concurrently on
// the calling goroutine and on the idle workers of the pool; with fewer
// than 2·grain indices, GOMAXPROCS = 1 or no idle worker, For simply calls
// fn(0, n) on the calling goroutine.
//
// For may be called from several goroutines at once, and from inside fn: a
// nested call never waits for a worker that is waiting itself, because the
// caller runs chunks too. A nested call made while every worker is busy
// (the usual case inside a parallel loop) runs inline.
//
// If some calls of fn panic, For lets the other chunks finish and then
// panics with the value of the first panic. fn escapes: For itself
// allocates nothing, but a closure that captures variables is allocated by
// the caller, so hot loops pass a func value built once, or use Loop.
func For(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	procs := runtime.GOMAXPROCS(0)
	chunks, size := cut(n, grain, procs)
	if chunks == 1 {
		fn(0, n)
		return
	}

	var helpers [maxHelpers]*worker
	h := pool.take(helpers[:min(chunks-1, procs-1, maxHelpers)], procs)
	if h == 0 {
		fn(0, n)
		return
	}
	j := pool.job()
	j.fn, j.n, j.size, j.chunks = fn, n, size, chunks
	j.next.Store(0)
	j.done.Store(0)
	j.refs.Store(int32(h + 1))
	for _, w := range helpers[:h] {
		w.wake <- j
	}
	if !j.work() {
		// A worker completes the last chunk: wait for it, spinning a while
		// first, since the other chunks usually end about when the
		// caller's do and parking costs more than that.
		for start := time.Now(); j.done.Load() < int64(j.chunks) && time.Since(start) < spin; {
			runtime.Gosched()
		}
		<-j.fin
	}
	p := j.panicked
	j.release()
	if p != nil {
		panic(p.value)
	}
}

// Chunks is how many ranges For cuts [0, n) into for a grain, n > 0:
// at most 4·GOMAXPROCS, and 1 where For calls fn(0, n) itself (one
// thread, or fewer than 2·grain indices). A loop
// that keeps something per range, such as scratch memory, can cut its
// indices into as many parts and give each part its own.
func Chunks(n, grain int) int {
	chunks, _ := cut(n, grain, runtime.GOMAXPROCS(0))
	return chunks
}

// cut returns how many ranges For cuts [0, n) into on procs threads, n >
// 0, and their size (the last may be shorter).
func cut(n, grain, procs int) (chunks, size int) {
	grain = max(grain, 1)
	if procs == 1 || n < 2*grain {
		return 1, n
	}
	chunks = min(n/grain, chunksPerWorker*procs)
	size = (n + chunks - 1) / chunks
	return (n + size - 1) / size, size
}

// maxHelpers bounds the helpers one call wakes (and so the stack array
// that holds them).
const maxHelpers = 256

// worker is a goroutine of the pool; it runs the jobs sent on wake.
type worker struct {
	wake chan *job
}

func (w *worker) loop() {
	for {
		j := w.next()
		last := j.work()
		// Idle again before the caller can return, so that a loop that
		// follows at once finds this worker.
		pool.park(w)
		if last {
			j.fin <- struct{}{}
		}
		j.release()
	}
}

// next waits for a job, spinning a while before it sleeps: loops tend to
// come in runs (a product's packing, then its tiles, then the next
// layer's), and waking a sleeping goroutine takes microseconds.
func (w *worker) next() *job {
	for start := time.Now(); time.Since(start) < spin; {
		select {
		case j := <-w.wake:
			return j
		default:
			runtime.Gosched()
		}
	}
	return <-w.wake
}

// spin is how long a caller waits for the workers, and an idle worker for
// work, before sleeping. It outlasts most of the serial stretches between
// a step's loops (an op too small to split, the graph moving to the next
// op): a worker that went to sleep in one wakes late for the next loop,
// and on a virtual machine whose idle core has halted, waking it takes
// longer still. On an Intel Xeon ("Intel(R) Xeon(R) Processor", family 6
// model 167, a 2-core KVM guest), 50µs let the workers sleep 17.6 times
// an inference batch of vit_cifar_patch4_32 at batch 64 and 37.1 times
// one of ViT-B/16 at batch 4; 500µs, 2.5 and 7.2 times. Paired runs of
// vit-train bench --precision mixed against 50µs took 0.944× the time
// (95% interval 0.922-0.966) to train the first and 0.932× (0.890-0.975)
// to infer the second; 200µs and 2ms did no better than 500µs. A worker
// spins by yielding, so other goroutines (the data loader's) still run.
const spin = 500 * time.Microsecond

// job is one call of For. Its chunks are claimed through next; the
// goroutine that completes the last one reports it (a worker on fin). The
// job goes back to the free list when the caller and every worker it woke
// have let go of it (refs).
type job struct {
	fn              func(lo, hi int)
	n, size, chunks int
	next, done      atomic.Int64
	refs            atomic.Int32
	fin             chan struct{}
	panicMu         sync.Mutex
	panicked        *panicValue
	_               [64]byte // keep the hot counters of neighbouring jobs apart
}

type panicValue struct{ value any }

// work runs chunks until none is left and reports whether this goroutine
// completed the last one.
func (j *job) work() (last bool) {
	for {
		i := int(j.next.Add(1) - 1)
		if i >= j.chunks {
			return last
		}
		lo := i * j.size
		j.run(lo, min(lo+j.size, j.n))
		if int(j.done.Add(1)) == j.chunks {
			last = true
		}
	}
}

// run calls fn(lo, hi), recording a panic instead of unwinding past the
// accounting of work.
func (j *job) run(lo, hi int) {
	defer func() {
		if r := recover(); r != nil {
			j.panicMu.Lock()
			if j.panicked == nil {
				j.panicked = &panicValue{r}
			}
			j.panicMu.Unlock()
		}
	}()
	j.fn(lo, hi)
}

func (j *job) release() {
	if j.refs.Add(-1) == 0 {
		j.fn, j.panicked = nil, nil
		pool.mu.Lock()
		pool.jobs = append(pool.jobs, j)
		pool.mu.Unlock()
	}
}

// pool holds the idle workers and the free jobs.
var pool workerPool

type workerPool struct {
	mu      sync.Mutex
	idle    []*worker // a stack: the worker that ran last is woken first
	started int
	jobs    []*job
}

// take moves up to len(dst) idle workers into dst and returns how many,
// first starting workers until procs of them exist.
func (p *workerPool) take(dst []*worker, procs int) int {
	p.mu.Lock()
	for ; p.started < procs; p.started++ {
		w := &worker{wake: make(chan *job, 1)}
		p.idle = append(p.idle, w)
		go w.loop()
		// A job stays taken until its last worker lets go, so a caller may
		// need a second one while a late worker holds the first: keep two
		// per worker ready.
		p.jobs = append(p.jobs, newJob(), newJob())
	}
	h := min(len(dst), len(p.idle))
	copy(dst, p.idle[len(p.idle)-h:])
	clear(p.idle[len(p.idle)-h:])
	p.idle = p.idle[:len(p.idle)-h]
	p.mu.Unlock()
	return h
}

// park returns w to the idle workers.
func (p *workerPool) park(w *worker) {
	p.mu.Lock()
	p.idle = append(p.idle, w)
	p.mu.Unlock()
}

// job returns a free job, making one if there is none.
func (p *workerPool) job() *job {
	p.mu.Lock()
	var j *job
	if n := len(p.jobs); n > 0 {
		j = p.jobs[n-1]
		p.jobs[n-1] = nil
		p.jobs = p.jobs[:n-1]
	}
	p.mu.Unlock()
	if j == nil {
		j = newJob()
	}
	return j
}

func newJob() *job { return &job{fin: make(chan struct{}, 1)} }
