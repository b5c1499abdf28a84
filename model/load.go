package model

import (
	"fmt"
	"slices"

	"github.com/vit-train/vit-train/formats/safetensors"
)

// Load copies tensors, saved from a network of spec from, into n by name.
// Every tensor of n must be present with its shape, and no other may be,
// except that a tensor the architecture can convert is converted (a ViT's
// pos_embed of another patch grid is resampled; the returned note says
// so) and, with skipHeads, the classification heads are left as they are
// (for a new class count). Errors name the tensor and the shapes.
func Load(n Network, tensors []safetensors.Tensor, from Spec, skipHeads bool) (note string, err error) {
	to := n.Spec()
	if from.Arch() != "" && from.Arch() != to.Arch() {
		return "", fmt.Errorf("the checkpoint holds the %s %s, not a %s like model %s", from.Arch(), from.Name(), to.Arch(), to.Name())
	}
	byName := make(map[string]safetensors.Tensor, len(tensors))
	for _, t := range tensors {
		byName[t.Name] = t
	}
	for _, p := range n.Tensors() {
		t, ok := byName[p.Name]
		delete(byName, p.Name)
		if skipHeads && to.Config.IsHead(p.Name) {
			continue
		}
		if !ok {
			return "", fmt.Errorf("checkpoint has no tensor %q, which model %s needs", p.Name, to.Name())
		}
		data := t.Data
		if !slices.Equal(t.Shape, p.Shape) {
			converted, msg, ok, err := to.Config.Convert(t, from.Config)
			if err != nil {
				return "", err
			}
			if !ok {
				return "", fmt.Errorf("checkpoint tensor %q has shape %v, model %s needs %v", p.Name, t.Shape, to.Name(), p.Shape)
			}
			data, note = converted, msg
		}
		if len(data) != len(p.Data) {
			return "", fmt.Errorf("checkpoint tensor %q has %d values, the model's %d", p.Name, len(data), len(p.Data))
		}
		copy(p.Data, data)
	}
	for name := range byName {
		if skipHeads && to.Config.IsHead(name) {
			continue
		}
		return "", fmt.Errorf("checkpoint has tensor %q, which model %s does not have", name, to.Name())
	}
	return note, nil
}
