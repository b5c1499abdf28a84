package optim

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// grain is the number of elements in one work unit.
const grain = 1 << 15

// span is the element range [lo, hi) of tensor t.
type span struct{ t, lo, hi int }

// partition cuts a list of tensors into work units of about grain elements:
// large tensors are split, consecutive small tensors are packed together.
type partition struct {
	spans  []span
	starts []int // unit u covers spans[starts[u]:starts[u+1]]
}

func newPartition(sizes []int) partition {
	p := partition{starts: []int{0}}
	fill := 0
	for t, n := range sizes {
		for lo := 0; lo < n; {
			hi := min(n, lo+grain-fill)
			p.spans = append(p.spans, span{t, lo, hi})
			fill += hi - lo
			lo = hi
			if fill >= grain {
				p.starts = append(p.starts, len(p.spans))
				fill = 0
			}
		}
	}
	if fill > 0 {
		p.starts = append(p.starts, len(p.spans))
	}
	return p
}

func (p *partition) units() int { return len(p.starts) - 1 }

func (p *partition) unit(u int) []span { return p.spans[p.starts[u]:p.starts[u+1]] }

// job runs fn over the units 0..n-1 on the calling goroutine and on idle
// pool workers, handing out units through an atomic counter. A job is built
// once and reused; running it does not allocate.
type job struct {
	fn   func(unit int)
	n    int
	next atomic.Int64
	wg   sync.WaitGroup
}

// pool is the process-wide set of helper goroutines, started on first use.
var pool struct {
	once sync.Once
	jobs chan *job
	size int
}

func startPool() {
	pool.size = runtime.GOMAXPROCS(0) - 1
	pool.jobs = make(chan *job, 4*max(pool.size, 1))
	for range pool.size {
		go func() {
			for j := range pool.jobs {
				j.work()
				j.wg.Done()
			}
		}()
	}
}

// run calls fn for every unit and returns when all calls have finished.
func (j *job) run() {
	if j.n <= 1 {
		if j.n == 1 {
			j.fn(0)
		}
		return
	}
	pool.once.Do(startPool)
	j.next.Store(0)
	for range min(pool.size, j.n-1) {
		j.wg.Add(1)
		select {
		case pool.jobs <- j:
		default:
			j.wg.Done() // every worker is busy: do the work here instead
		}
	}
	j.work()
	j.wg.Wait()
}

func (j *job) work() {
	for {
		u := int(j.next.Add(1)) - 1
		if u >= j.n {
			return
		}
		j.fn(u)
	}
}

// sharded is a partition plus the job that runs a per-unit function over it.
type sharded struct {
	part partition
	job  job
}

// init partitions tensors of the given sizes and sets the per-unit function.
func (s *sharded) init(sizes []int, fn func(unit int)) {
	s.part = newPartition(sizes)
	s.job.fn = fn
	s.job.n = s.part.units()
}
