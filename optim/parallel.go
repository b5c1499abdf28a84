package optim

import "github.com/vit-train/vit-train/nn/parallel"

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

func newPartition(sizes []int) partition { return newRowPartition(sizes, nil) }

// newRowPartition is newPartition but for the tensors t with chunk[t] > 0,
// which it cuts only at multiples of chunk[t] values, each span of them a
// unit of its own of as many whole chunks as come to about grain values
// (at least one), the last span what is left.
func newRowPartition(sizes, chunk []int) partition {
	p := partition{starts: []int{0}}
	fill := 0
	endUnit := func() {
		if fill > 0 {
			p.starts = append(p.starts, len(p.spans))
			fill = 0
		}
	}
	for t, n := range sizes {
		if t < len(chunk) && chunk[t] > 0 {
			endUnit()
			step := max(1, grain/chunk[t]) * chunk[t]
			for lo := 0; lo < n; lo += step {
				p.spans = append(p.spans, span{t, lo, min(n, lo+step)})
				p.starts = append(p.starts, len(p.spans))
			}
			continue
		}
		for lo := 0; lo < n; {
			hi := min(n, lo+grain-fill)
			p.spans = append(p.spans, span{t, lo, hi})
			fill += hi - lo
			lo = hi
			if fill >= grain {
				endUnit()
			}
		}
	}
	endUnit()
	return p
}

func (p *partition) units() int { return len(p.starts) - 1 }

func (p *partition) unit(u int) []span { return p.spans[p.starts[u]:p.starts[u+1]] }

// job runs fn over the units 0..n-1 with parallel.For. A job is built once
// and reused at a fixed address; running it does not allocate.
type job struct {
	fn   func(unit int)
	n    int
	body func(lo, hi int) // built on the first run
}

// run calls fn for every unit and returns when all calls have finished.
func (j *job) run() {
	if j.body == nil {
		j.body = func(lo, hi int) {
			for u := lo; u < hi; u++ {
				j.fn(u)
			}
		}
	}
	parallel.For(j.n, 1, j.body)
}

// sharded is a partition plus the job that runs a per-unit function over it.
type sharded struct {
	part partition
	job  job
}

// init partitions tensors of the given sizes and sets the per-unit function.
func (s *sharded) init(sizes []int, fn func(unit int)) { s.initRows(sizes, nil, fn) }

// initRows is init with tensor t cut only at multiples of chunk[t] values
// where that is above 0 (see newRowPartition).
func (s *sharded) initRows(sizes, chunk []int, fn func(unit int)) {
	s.part = newRowPartition(sizes, chunk)
	s.job.fn = fn
	s.job.n = s.part.units()
}
