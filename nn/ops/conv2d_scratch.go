package ops

import "sync"

// scratchPool hands out temporary buffers (im2col columns, gathered
// gradients, partial sums) shared by every convolution in the process. A
// buffer is taken for the duration of one group of samples and returned
// afterwards; once every layer has run once, nothing more is allocated.
type scratchPool[T Float] struct {
	mu   sync.Mutex
	free [][]T
}

var (
	scratch32 scratchPool[float32]
	scratch64 scratchPool[float64]
)

// getScratch returns a buffer of length n with unspecified contents: the
// smallest free buffer that is large enough, or else a new one that takes
// the place of the largest free buffer, so that the pool never holds more
// buffers than were ever out at once.
func getScratch[T Float](n int) []T {
	p := scratchPoolFor[T]()
	p.mu.Lock()
	best, largest := -1, -1
	for i, b := range p.free {
		if cap(b) >= n && (best < 0 || cap(b) < cap(p.free[best])) {
			best = i
		}
		if largest < 0 || cap(b) > cap(p.free[largest]) {
			largest = i
		}
	}
	var buf []T
	if best >= 0 {
		buf = p.free[best]
		p.free = append(p.free[:best], p.free[best+1:]...)
	} else if largest >= 0 {
		p.free = append(p.free[:largest], p.free[largest+1:]...)
	}
	p.mu.Unlock()
	if buf == nil {
		buf = make([]T, n)
	}
	return buf[:n]
}

// putScratch returns a buffer obtained from getScratch.
func putScratch[T Float](buf []T) {
	p := scratchPoolFor[T]()
	p.mu.Lock()
	p.free = append(p.free, buf)
	p.mu.Unlock()
}

func scratchPoolFor[T Float]() *scratchPool[T] {
	if p, ok := any(&scratch32).(*scratchPool[T]); ok {
		return p
	}
	return any(&scratch64).(*scratchPool[T])
}
