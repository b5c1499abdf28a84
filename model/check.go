package model

import (
	"fmt"
	"maps"
	"slices"

	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model/resnet"
	"github.com/vit-train/vit-train/model/vit"
)

// maxImageSize bounds a ResNet's input size, which only its spec records
// (a ViT's follows from its position embedding).
const maxImageSize = 1 << 14

// CheckTensors checks, without building the network, that tensors are
// exactly the parameters (and buffers) of the network of spec s, by name
// and shape, and that s is one a file of that size can describe: so that
// building the network allocates no more than the file holds. source names
// where s came from (a checkpoint's metadata key) for errors.
func CheckTensors(s Spec, tensors []safetensors.Tensor, source string) error {
	switch s.Arch {
	case ArchViT:
		return checkViT(s.ViT, tensors, source)
	case ArchResNet:
		if err := checkResNet(s.ResNet, tensors); err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		return nil
	}
	return fmt.Errorf("%s: architecture %q: want %q or %q", source, s.Arch, ArchViT, ArchResNet)
}

// namedShape is a tensor a model needs.
type namedShape struct {
	name  string
	shape []int
}

// checkViT checks a ViT configuration against the parameter tensors.
func checkViT(cfg vit.Config, params []safetensors.Tensor, source string) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	// Each block has a dozen tensors: bound the depth before laying out
	// the blocks' specs.
	if cfg.Depth > len(params) {
		return fmt.Errorf("%s: depth %d, but the file holds only %d parameter tensors", source, cfg.Depth, len(params))
	}
	specs := cfg.ParamSpecs()
	want := make([]namedShape, len(specs))
	for i, s := range specs {
		want[i] = namedShape{s.Name, s.Shape}
	}
	return matchTensors(want, params, fmt.Sprintf("the model of %s (%s)", source, cfg.Name))
}

// checkResNet checks a ResNet configuration against the parameter and
// buffer tensors.
func checkResNet(spec ResNetSpec, params []safetensors.Tensor) error {
	total := 0
	for _, t := range params {
		total += len(t.Data)
	}
	switch {
	case spec.Channels < 1 || spec.Channels > total:
		return fmt.Errorf("in_chans %d: want 1 to %d, the values the file holds", spec.Channels, total)
	case spec.NumClasses < 1 || spec.NumClasses > total:
		return fmt.Errorf("num_classes %d: want 1 to %d, the values the file holds", spec.NumClasses, total)
	case spec.ImageSize < 1 || spec.ImageSize > maxImageSize:
		return fmt.Errorf("img_size %d: want 1 to %d", spec.ImageSize, maxImageSize)
	}
	n, err := resnet.NumParams(spec.config())
	if err != nil {
		return err
	}
	if n > total {
		return fmt.Errorf("%s with %d classes has %d parameters, but the file holds %d values", spec.Arch, spec.NumClasses, n, total)
	}
	ps, bufs, err := resnet.Shapes(spec.config())
	if err != nil {
		return err
	}
	var want []namedShape
	for _, t := range append(ps, bufs...) {
		want = append(want, namedShape{t.Name, t.Shape})
	}
	return matchTensors(want, params, "model "+spec.Arch)
}

// matchTensors checks that have holds exactly the tensors of want, by name
// and shape; model describes them for errors.
func matchTensors(want []namedShape, have []safetensors.Tensor, model string) error {
	byName := make(map[string]safetensors.Tensor, len(have))
	for _, t := range have {
		byName[t.Name] = t
	}
	for _, w := range want {
		t, ok := byName[w.name]
		if !ok {
			return fmt.Errorf("tensor %q is missing; %s needs it with shape %v", w.name, model, w.shape)
		}
		if !slices.Equal(t.Shape, w.shape) {
			return fmt.Errorf("tensor %q has shape %v, but %s needs %v", w.name, t.Shape, model, w.shape)
		}
		delete(byName, w.name)
	}
	if len(byName) > 0 {
		extra := slices.Sorted(maps.Keys(byName))
		return fmt.Errorf("tensor %q is not a parameter of %s (nor optimiser state or EMA weights)", extra[0], model)
	}
	return nil
}
