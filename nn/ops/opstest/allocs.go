package opstest

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"

	"github.com/vit-train/vit-train/internal/allocs"
)

// AllocationBudget is the most heap allocations one run of g may make:
// none for vit-train's ops, at most 4 for each of Gorgonia's own ops (the
// Adds its autodiff inserts to sum a value's gradients), plus 4 for the
// runtime. It also returns how many of Gorgonia's ops g holds.
func AllocationBudget(g *gorgonia.ExprGraph) (limit float64, gorgoniaOps int) {
	for _, n := range g.AllNodes() {
		if op := n.Op(); op != nil && strings.HasPrefix(reflect.TypeOf(op).PkgPath(), "gorgonia.org/") {
			gorgoniaOps++
		}
	}
	return float64(4*gorgoniaOps + 4), gorgoniaOps
}

// CheckAllocations runs f, a run of g, at GOMAXPROCS procs (see
// allocs.PerRun) and fails t when a run allocates more than
// AllocationBudget(g). It skips t under the race detector, whose
// sync.Pool drops items at random.
func CheckAllocations(t testing.TB, name string, g *gorgonia.ExprGraph, procs, runs int, f func()) {
	t.Helper()
	if allocs.RaceDetector {
		t.Skip("the race detector's sync.Pool drops items at random")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	limit, gorgoniaOps := AllocationBudget(g)
	perRun := allocs.PerRun(runs, f)
	t.Logf("%s, GOMAXPROCS=%d: %.1f allocations per run, %d Gorgonia ops", name, procs, perRun, gorgoniaOps)
	if perRun > limit {
		t.Errorf("%s, GOMAXPROCS=%d: %.1f allocations per run, more than %v for %d Gorgonia ops", name, procs, perRun, limit, gorgoniaOps)
	}
}
