// Package allocs counts heap allocations, for tests that check a hot path
// allocates nothing.
package allocs

import "runtime"

// PerRun returns the heap allocations per call of f, run 10 times to warm
// up and then runs times at the current GOMAXPROCS or the number of CPUs,
// whichever is less (testing.AllocsPerRun pins it to 1, where parallel
// loops run inline). A goroutine that blocks takes a runtime record (a
// sudog) from a per-P cache that the runtime refills by allocating now
// and then, so the count may be a small fraction, never a whole
// allocation per call. With more Ps than CPUs, the pool's workers
// outwait their spin while the operating system runs other threads, so
// they block between loops far more often, and the refills came to 0.9
// of an allocation per product (GOMAXPROCS=16 on 2 CPUs).
func PerRun(runs int, f func()) float64 {
	if threads := Threads(); runtime.GOMAXPROCS(0) > threads {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
	}
	for range 10 {
		f()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(runs)
}

// Threads is the GOMAXPROCS PerRun measures at: the current one or the
// number of CPUs, whichever is less.
func Threads() int { return min(runtime.GOMAXPROCS(0), runtime.NumCPU()) }

// Tries is how many times Least measures before it reports a count over
// its limit.
const Tries = 3

// Least is PerRun measured up to Tries times, stopping as soon as one
// measurement is at most limit, and returns the least count: a runtime
// cache refilled during one measurement is not the code's allocation,
// while code that allocates on every call exceeds limit every time.
func Least(limit float64, runs int, f func()) float64 {
	n := PerRun(runs, f)
	for try := 1; try < Tries && n > limit; try++ {
		n = min(n, PerRun(runs, f))
	}
	return n
}

// LeastOfTries is PerRun measured exactly Tries times, returning the least
// count. Unlike Least it runs f the same number of times whatever it
// measures, as collectives must, where every process of a job calls f in
// step with the others.
func LeastOfTries(runs int, f func()) float64 {
	n := PerRun(runs, f)
	for try := 1; try < Tries; try++ {
		n = min(n, PerRun(runs, f))
	}
	return n
}
