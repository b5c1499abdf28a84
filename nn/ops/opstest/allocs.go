package opstest

import (
	"reflect"
	"strings"

	"gorgonia.org/gorgonia"
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
