package optim

import (
	"fmt"
	"math"
)

// LayerMap assigns each parameter name a layer id in [0, MaxLayer] for
// layer-wise learning-rate decay: a parameter of layer id gets LRScale
// decay^(MaxLayer − id). The model supplies it (timm's group_matcher; see
// model.Config.LayerMap).
type LayerMap struct {
	MaxLayer int
	ID       func(name string) (int, error)
}

// LayerDecayGroups builds timm's layer-decay parameter groups
// "layer_<id>_decay" and "layer_<id>_no_decay" (in order of first use):
// weight decay as in WeightDecayGroups, LRScale = layerDecay^(MaxLayer − id).
func LayerDecayGroups(params []Param, weightDecay float64, noDecay []string, layerDecay float64, layers LayerMap) ([]Group, error) {
	if !(layerDecay > 0) {
		return nil, fmt.Errorf("optim: layer decay %g must be > 0", layerDecay)
	}
	var groups []Group
	index := map[string]int{}
	for i, p := range params {
		id, err := layers.ID(p.Name)
		if err != nil {
			return nil, err
		}
		if id < 0 || id > layers.MaxLayer {
			return nil, fmt.Errorf("optim: param %q: layer id %d is not in [0, %d]", p.Name, id, layers.MaxLayer)
		}
		name, wd := fmt.Sprintf("layer_%d_no_decay", id), 0.0
		if decays(p, noDecay) {
			name, wd = fmt.Sprintf("layer_%d_decay", id), weightDecay
		}
		gi, ok := index[name]
		if !ok {
			gi = len(groups)
			index[name] = gi
			groups = append(groups, Group{Name: name, WeightDecay: wd, LRScale: math.Pow(layerDecay, float64(layers.MaxLayer-id))})
		}
		groups[gi].Params = append(groups[gi].Params, i)
	}
	return groups, nil
}
