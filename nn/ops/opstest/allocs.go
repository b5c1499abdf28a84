package opstest

import (
	"runtime"
	"testing"

	"github.com/vit-train/vit-train/internal/allocs"
)

// AllocationBudget is the most heap allocations one run of a compiled
// graph may make at GOMAXPROCS procs: none on one worker, where every loop
// runs inline. On more, the runtime now and then refills its per-worker
// caches of the records of blocked goroutines, and the products' buffer
// pools grow while the workers settle: a fraction of an allocation per
// run, which may reach a few.
func AllocationBudget(procs int) float64 {
	if procs == 1 {
		return 0
	}
	return 4
}

// CheckAllocations runs f, one run of a compiled graph, at GOMAXPROCS
// procs (see allocs.Least) and fails t when a run allocates more than
// AllocationBudget(procs). The count is the least of a few measurements:
// the runtime's counter is the whole process's, so another goroutine's
// allocation (a timer, a worker parking) can only add to it, while an
// allocation of f shows in every measurement. It skips t under the race
// detector, whose sync.Pool drops items at random.
func CheckAllocations(t testing.TB, name string, procs, runs int, f func()) {
	t.Helper()
	if allocs.RaceDetector {
		t.Skip("the race detector's sync.Pool drops items at random")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	limit := AllocationBudget(procs)
	perRun := allocs.Least(limit, runs, f)
	t.Logf("%s, GOMAXPROCS=%d: %.1f allocations per run", name, procs, perRun)
	if perRun > limit {
		t.Errorf("%s, GOMAXPROCS=%d: %.1f allocations per run, more than %v", name, procs, perRun, limit)
	}
}
