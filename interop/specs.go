package interop

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model/vit"
)

// maxProblems is how many missing, misshapen or unexpected tensors an error
// lists before summarising the rest.
const maxProblems = 8

// matchSpecs checks that tensors are exactly cfg's parameters — every name
// of cfg.ParamSpecs, with its shape, and nothing else — and returns them in
// ParamSpecs order as F32 tensors sharing the input data.
func matchSpecs(cfg vit.Config, tensors []safetensors.Tensor) ([]safetensors.Tensor, error) {
	byName := make(map[string]safetensors.Tensor, len(tensors))
	var problems []error
	more := 0 // problems beyond maxProblems, counted but not described
	report := func(format string, args ...any) {
		if len(problems) < maxProblems {
			problems = append(problems, fmt.Errorf(format, args...))
		} else {
			more++
		}
	}
	for _, t := range tensors {
		if _, dup := byName[t.Name]; dup {
			report("tensor %q appears twice", t.Name)
		}
		byName[t.Name] = t
	}
	specs := cfg.ParamSpecs()
	out := make([]safetensors.Tensor, 0, len(specs))
	for _, s := range specs {
		t, ok := byName[s.Name]
		delete(byName, s.Name)
		switch {
		case !ok:
			report("tensor %q is missing (model %s needs shape %v)", s.Name, cfg.Name, s.Shape)
		case !slices.Equal(t.Shape, s.Shape) || len(t.Data) != s.Size():
			report("tensor %q has shape %v, model %s needs %v", s.Name, t.Shape, cfg.Name, s.Shape)
		default:
			out = append(out, safetensors.Tensor{Name: s.Name, Shape: slices.Clone(s.Shape), Data: t.Data})
		}
	}
	extra := make([]string, 0, len(byName))
	for name := range byName {
		extra = append(extra, name)
	}
	sort.Strings(extra)
	for _, name := range extra {
		report("unexpected tensor %q of shape %v: model %s (a timm ViT/DeiT with class-token pooling) has no such parameter", name, byName[name].Shape, cfg.Name)
	}
	if more > 0 {
		problems = append(problems, fmt.Errorf("and %d more problems", more))
	}
	return out, errors.Join(problems...)
}
