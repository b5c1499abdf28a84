package optim

import (
	"fmt"
	"slices"
	"strings"
)

// Group is a set of parameters sharing a weight decay and a learning-rate
// scale, like an entry of a PyTorch optimizer's param_groups: a parameter in
// the group is updated with learning rate lr×LRScale, where lr is the value
// passed to Step.
type Group struct {
	Name        string
	WeightDecay float64
	LRScale     float64
	Params      []int // indices into the optimizer's parameter list
}

// decays reports whether weight decay applies to p: not for tensors of rank
// ≤ 1 (biases, norm weights), names ending in ".bias", or names in noDecay
// (timm's param_groups_weight_decay rule); the model supplies noDecay
// (timm's no_weight_decay(); see model.Config.NoWeightDecay).
func decays(p Param, noDecay []string) bool {
	return len(p.Shape) > 1 && !strings.HasSuffix(p.Name, ".bias") && !slices.Contains(noDecay, p.Name)
}

// WeightDecayGroups splits params into timm's two groups: "no_decay"
// (weight decay 0) and "decay" (weightDecay), both with LRScale 1. Empty
// groups are left out.
func WeightDecayGroups(params []Param, weightDecay float64, noDecay []string) []Group {
	noDec := Group{Name: "no_decay", LRScale: 1}
	dec := Group{Name: "decay", WeightDecay: weightDecay, LRScale: 1}
	for i, p := range params {
		if decays(p, noDecay) {
			dec.Params = append(dec.Params, i)
		} else {
			noDec.Params = append(noDec.Params, i)
		}
	}
	var out []Group
	for _, g := range []Group{noDec, dec} {
		if len(g.Params) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// hyper holds the per-parameter hyperparameters resolved from the groups.
type hyper struct{ weightDecay, lrScale float64 }

// resolveGroups checks that every parameter is in exactly one group and
// returns each parameter's hyperparameters. Nil groups mean one group with
// weight decay defaultWD and LRScale 1.
func resolveGroups(params []Param, groups []Group, defaultWD float64) ([]hyper, error) {
	hp := make([]hyper, len(params))
	if groups == nil {
		for i := range hp {
			hp[i] = hyper{defaultWD, 1}
		}
		return hp, nil
	}
	owner := make([]int, len(params))
	for i := range owner {
		owner[i] = -1
	}
	for gi, g := range groups {
		if g.WeightDecay < 0 || g.LRScale < 0 {
			return nil, fmt.Errorf("optim: group %d %q: negative WeightDecay %g or LRScale %g", gi, g.Name, g.WeightDecay, g.LRScale)
		}
		for _, pi := range g.Params {
			if pi < 0 || pi >= len(params) {
				return nil, fmt.Errorf("optim: group %d %q: param index %d out of range [0, %d)", gi, g.Name, pi, len(params))
			}
			if owner[pi] >= 0 {
				return nil, fmt.Errorf("optim: param %q is in group %d %q and group %d %q", params[pi].Name, owner[pi], groups[owner[pi]].Name, gi, g.Name)
			}
			owner[pi] = gi
			hp[pi] = hyper{g.WeightDecay, g.LRScale}
		}
	}
	for i, o := range owner {
		if o < 0 {
			return nil, fmt.Errorf("optim: param %q is in no group", params[i].Name)
		}
	}
	return hp, nil
}
