package ops

import (
	"runtime"
	"sync"
)

// parallelFor calls fn over [0, n) split into contiguous chunks, one per
// worker, when there is at least grain work per worker; otherwise inline.
func parallelFor(n, grain int, fn func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if grain < 1 {
		grain = 1
	}
	if w := n / grain; w < workers {
		workers = w
	}
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, hi)
	}
	wg.Wait()
}
