package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model/resnet"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/optim"
)

// resnetNetwork is a ResNet as a Network.
type resnetNetwork struct {
	spec ResNetSpec
	m    *resnet.Model
}

// ResNetOf returns the ResNet a network is, or an error naming the network
// when it is another architecture: for what only a ResNet has (its layout of
// convolutions and batch norms).
func ResNetOf(n Network) (*resnet.Model, error) {
	if r, ok := n.(*resnetNetwork); ok {
		return r.m, nil
	}
	return nil, fmt.Errorf("model %s is a %s, not a ResNet", n.Name(), n.Spec().Arch)
}

func (n *resnetNetwork) Name() string { return n.spec.Arch }

func (n *resnetNetwork) Spec() Spec { return ResNet(n.spec) }

func (n *resnetNetwork) Input() (int, int) { return n.spec.Channels, n.spec.ImageSize }

func (n *resnetNetwork) NumClasses() int { return n.spec.NumClasses }

func (n *resnetNetwork) Describe() string {
	count := 0
	for _, p := range n.m.Params() {
		count += p.Shape.TotalSize()
	}
	return fmt.Sprintf("model %s: %.2fM parameters, %d×%d input", n.spec.Arch, float64(count)/1e6, n.spec.ImageSize, n.spec.ImageSize)
}

func (n *resnetNetwork) Params() []optim.Param {
	ps := make([]optim.Param, len(n.m.Params()))
	for i, p := range n.m.Params() {
		ps[i] = optim.Param{Name: p.Name, Shape: p.Shape.Clone(), Data: p.Value.Data().([]float32)}
	}
	return ps
}

func (n *resnetNetwork) Tensors() []safetensors.Tensor {
	var out []safetensors.Tensor
	for _, group := range [][]resnet.Param{n.m.Params(), n.m.Buffers()} {
		for _, p := range group {
			out = append(out, safetensors.Tensor{Name: p.Name, Shape: p.Shape.Clone(), Data: p.Value.Data().([]float32)})
		}
	}
	return out
}

// Graph builds the ResNet's forward pass. A training graph normalises with
// batch statistics and updates the running statistics on every run; an
// evaluation graph uses the running statistics and changes nothing.
func (n *resnetNetwork) SetPrecision(v blas.Variant) { n.m.SetProducts(v) }

func (n *resnetNetwork) Graph(batch int, training bool, _ *ops.Randomness) (*nn.Graph, error) {
	if batch < 1 {
		return nil, fmt.Errorf("model %s: batch size must be positive, got %d", n.spec.Arch, batch)
	}
	g := gorgonia.NewGraph()
	shape := tensor.Shape{batch, n.spec.Channels, n.spec.ImageSize, n.spec.ImageSize}
	img := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(shape...))
	x := gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(shape...), gorgonia.WithName("images"), gorgonia.WithValue(img))
	logits, err := n.m.Build(g, x, training)
	if err != nil {
		return nil, err
	}
	nodes, err := n.m.ParamNodes(g)
	if err != nil {
		return nil, err
	}
	return &nn.Graph{Training: training, Batch: batch, G: g, Images: x, ImageData: img.Data(), Logits: logits, ParamNodes: nodes}, nil
}

// NoWeightDecay is empty: as timm's param_groups_weight_decay does for a
// ResNet, only the rank-1 tensors (batch-norm weights and biases, fc.bias)
// go without weight decay, which optim's groups apply by rank.
func (n *resnetNetwork) NoWeightDecay() []string { return nil }

// LayerMap assigns layers by stage, as timm's ResNet.group_matcher
// (coarse): the stem (conv1, bn1) is layer 0, layer<k>.* is layer k, and
// fc is the last layer, one past the last stage.
func (n *resnetNetwork) LayerMap() optim.LayerMap {
	stages := 0
	for _, p := range n.m.Params() {
		if k, ok := resnetStage(p.Name); ok {
			stages = max(stages, k)
		}
	}
	return optim.LayerMap{MaxLayer: stages + 1, ID: func(name string) (int, error) {
		switch {
		case strings.HasPrefix(name, "conv1.") || strings.HasPrefix(name, "bn1."):
			return 0, nil
		case strings.HasPrefix(name, "fc."):
			return stages + 1, nil
		}
		if k, ok := resnetStage(name); ok && k <= stages {
			return k, nil
		}
		return 0, fmt.Errorf("optim: param %q is not a parameter of %s (stem, layer1 to layer%d or fc)", name, n.spec.Arch, stages)
	}}
}

// resnetStage returns k for names "layer<k>.…".
func resnetStage(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "layer")
	if !ok {
		return 0, false
	}
	idx, _, _ := strings.Cut(rest, ".")
	k, err := strconv.Atoi(idx)
	return k, err == nil && k >= 1
}

func (n *resnetNetwork) IsHead(name string) bool { return strings.HasPrefix(name, "fc.") }

func (n *resnetNetwork) SharingWeights(weights [][]float32) (Network, error) {
	m, err := n.m.SharingWeights(weights)
	if err != nil {
		return nil, err
	}
	return &resnetNetwork{spec: n.spec, m: m}, nil
}

func (n *resnetNetwork) targets() []target {
	var out []target
	for _, t := range n.Tensors() {
		out = append(out, target{name: t.Name, shape: t.Shape, set: func(data []float32) error {
			if len(data) != len(t.Data) {
				return fmt.Errorf("checkpoint tensor %q has %d values, the model's %d", t.Name, len(data), len(t.Data))
			}
			copy(t.Data, data)
			return nil
		}})
	}
	return out
}

// adapt knows no conversions: a ResNet takes any input size as it is.
func (n *resnetNetwork) adapt(safetensors.Tensor, Spec) ([]float32, string, bool, error) {
	return nil, "", false, nil
}

// PyTorchLoad names torchvision's constructor for the ImageNet ResNets
// and the CIFAR layout (chenyaofo/pytorch-cifar-models, torchvision's
// names) for the others. strict=False because num_batches_tracked is not
// stored; a model with in_chans other than 3 needs its conv1 replaced
// first.
func (n *resnetNetwork) PyTorchLoad(path string) string {
	ctor := fmt.Sprintf("torchvision.models.%s(num_classes=%d)", n.spec.Arch, n.spec.NumClasses)
	if n.m.Config().Channels != 3 || !slices.Contains([]string{"resnet18", "resnet34", "resnet50", "resnet101", "resnet152"}, n.spec.Arch) {
		ctor = fmt.Sprintf("%s (torchvision names; in_chans=%d, num_classes=%d)", n.spec.Arch, n.spec.Channels, n.spec.NumClasses)
	}
	return fmt.Sprintf("torchvision: %s.load_state_dict(safetensors.torch.load_file(%q), strict=False)", ctor, path)
}
