package model

import (
	"fmt"
	"maps"
	"slices"

	"github.com/vit-train/vit-train/formats/safetensors"
)

// CheckTensors checks, without building the network, that tensors are
// exactly the parameters (and buffers) of the network of spec s, by name
// and shape, and that s is one a file of that size can describe: so that
// building the network allocates no more than the file holds. source names
// where s came from (a checkpoint's metadata key) for errors.
func CheckTensors(s Spec, tensors []safetensors.Tensor, source string) error {
	if s.Config == nil {
		return fmt.Errorf("%s: %w", source, errNoConfig)
	}
	if err := s.Config.CheckTensors(tensors); err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	return nil
}

// NamedShape is a tensor a network needs.
type NamedShape struct {
	Name  string
	Shape []int
}

// MatchTensors checks that have holds exactly the tensors of want, by name
// and shape; model describes the network for errors.
func MatchTensors(want []NamedShape, have []safetensors.Tensor, model string) error {
	byName := make(map[string]safetensors.Tensor, len(have))
	for _, t := range have {
		byName[t.Name] = t
	}
	for _, w := range want {
		t, ok := byName[w.Name]
		if !ok {
			return fmt.Errorf("tensor %q is missing; %s needs it with shape %v", w.Name, model, w.Shape)
		}
		if !slices.Equal(t.Shape, w.Shape) {
			return fmt.Errorf("tensor %q has shape %v, but %s needs %v", w.Name, t.Shape, model, w.Shape)
		}
		delete(byName, w.Name)
	}
	if len(byName) > 0 {
		extra := slices.Sorted(maps.Keys(byName))
		return fmt.Errorf("tensor %q is not a parameter of %s (nor optimiser state or EMA weights)", extra[0], model)
	}
	return nil
}
