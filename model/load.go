package model

import (
	"fmt"
	"slices"

	"github.com/vit-train/vit-train/formats/safetensors"
)

// Target is one tensor Load fills: its name and shape, and how its values
// are set from float32 data of that shape.
type Target struct {
	Name  string
	Shape []int
	Set   func(data []float32) error
}

// Targeted is implemented by networks whose tensors Load cannot fill
// through Tensors (a float64 ViT, for gradient checks).
type Targeted interface {
	Targets() []Target
}

// targets lists what Load fills in n, in Tensors order.
func targets(n Network) []Target {
	if t, ok := n.(Targeted); ok {
		return t.Targets()
	}
	var out []Target
	for _, t := range n.Tensors() {
		out = append(out, Target{Name: t.Name, Shape: t.Shape, Set: func(data []float32) error {
			if len(data) != len(t.Data) {
				return fmt.Errorf("checkpoint tensor %q has %d values, the model's %d", t.Name, len(data), len(t.Data))
			}
			copy(t.Data, data)
			return nil
		}})
	}
	return out
}

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
	for _, p := range targets(n) {
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
		if err := p.Set(data); err != nil {
			return "", err
		}
	}
	for name := range byName {
		if skipHeads && to.Config.IsHead(name) {
			continue
		}
		return "", fmt.Errorf("checkpoint has tensor %q, which model %s does not have", name, to.Name())
	}
	return note, nil
}

// Resized returns a network of n's spec for images of size, with n's
// weights (a ViT's pos_embed resampled to the new patch grid) and a note
// saying what was resampled.
func Resized(n Network, size int) (Network, string, error) {
	out, err := New(n.Spec().WithInput(size, 0), 0)
	if err != nil {
		return nil, "", err
	}
	note, err := Load(out, n.Tensors(), n.Spec(), false)
	if err != nil {
		return nil, "", err
	}
	return out, note, nil
}
