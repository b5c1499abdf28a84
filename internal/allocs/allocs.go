// Package allocs counts heap allocations, for tests that check a hot path
// allocates nothing.
package allocs

import "runtime"

// PerRun returns the heap allocations per call of f, run 10 times to warm
// up and then runs times at the current GOMAXPROCS (testing.AllocsPerRun
// pins it to 1, where parallel loops run inline). A goroutine that blocks
// takes a runtime record from a per-P cache that the runtime refills by
// allocating now and then, so the count may be a small fraction, never a
// whole allocation per call.
func PerRun(runs int, f func()) float64 {
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
