package blas

import (
	"sync"
	"sync/atomic"

	"github.com/vit-train/vit-train/internal/hugepages"
)

// freeList recycles items: a few slots taken and refilled with one atomic
// operation each, which single-threaded sequences of calls always find,
// then a list under a mutex for the rest.
type freeList[T any] struct {
	slots [4]atomic.Pointer[T]
	mu    sync.Mutex
	more  []*T
}

// take returns a free item, or nil.
func (f *freeList[T]) take() *T {
	for i := range f.slots {
		if f.slots[i].Load() != nil {
			if p := f.slots[i].Swap(nil); p != nil {
				return p
			}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.more); n > 0 {
		p := f.more[n-1]
		f.more[n-1] = nil
		f.more = f.more[:n-1]
		return p
	}
	return nil
}

func (f *freeList[T]) put(p *T) {
	for i := range f.slots {
		if f.slots[i].Load() == nil && f.slots[i].CompareAndSwap(nil, p) {
			return
		}
	}
	f.mu.Lock()
	f.more = append(f.more, p)
	f.mu.Unlock()
}

// bufPool recycles float32 buffers. A buffer too small for a request is
// put back and another tried once; failing that one is grown, so after the
// first calls of each size nothing is allocated.
type bufPool struct{ freeList[[]float32] }

// get returns a buffer of at least n floats, 64-byte aligned.
func (p *bufPool) get(n int) *[]float32 {
	s := p.take()
	if s != nil && len(*s) < n {
		if t := p.take(); t != nil && len(*t) >= n {
			p.put(s)
			s = t
		} else if t != nil {
			p.put(t)
		}
	}
	if s == nil {
		s = new([]float32)
	}
	if len(*s) < n {
		*s = alignedFloats(n)
	}
	return s
}

// alignedFloats returns n zero floats whose first is 64-byte aligned, on
// huge pages where they span any.
func alignedFloats(n int) []float32 { return hugepages.Make[float32](n) }
