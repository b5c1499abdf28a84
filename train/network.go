package train

import (
	"fmt"
	"slices"
	"strings"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/models/resnet"
	"github.com/vit-train/vit-train/models/vit"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/optim"
)

// Architectures a checkpoint records under "vit_train.arch".
const (
	ArchViT    = "vit"
	ArchResNet = "resnet"
)

// network is a model a run trains or distils from: a ViT or a ResNet.
type network interface {
	// Name is the preset or architecture name.
	Name() string
	// Input is the (channels, image size) the model takes.
	Input() (channels, size int)
	// NumClasses is the width of the logits.
	NumClasses() int
	// Describe summarises the model for the run's first line.
	Describe() string
	// Params are the trainable parameters, aligned with every graph's ParamNodes.
	Params() []optim.Param
	// Tensors are what a checkpoint stores: the parameters and any buffers
	// (batch-norm running statistics), sharing the model's memory.
	Tensors() []safetensors.Tensor
	// Graph builds a forward graph for batch images.
	Graph(batch int, training bool, rng *ops.Randomness) (*nn.Graph, error)
	// Load copies a checkpoint's tensors into the model.
	Load(ck *Checkpoint) error
}

// vitNet is a ViT as a network.
type vitNet struct{ m *vit.ViT }

func (n vitNet) Name() string { return n.m.Config.Name }

func (n vitNet) Input() (int, int) { return n.m.Config.Channels, n.m.Config.ImageSize }

func (n vitNet) NumClasses() int { return n.m.Config.NumClasses }

func (n vitNet) Describe() string {
	c := n.m.Config
	return fmt.Sprintf("model %s: %.2fM parameters, %d tokens", c.Name, float64(c.ParamCount())/1e6, c.NumTokens())
}

func (n vitNet) Params() []optim.Param {
	ps := make([]optim.Param, len(n.m.Params))
	for i, p := range n.m.Params {
		ps[i] = optim.Param{Name: p.Name, Shape: p.Value.Shape().Clone(), Data: p.Float32s()}
	}
	return ps
}

func (n vitNet) Tensors() []safetensors.Tensor { return ModelTensors(n.m) }

func (n vitNet) Graph(batch int, training bool, rng *ops.Randomness) (*nn.Graph, error) {
	return n.m.BuildGraph(batch, training, rng)
}

func (n vitNet) Load(ck *Checkpoint) error {
	if ck.Arch == ArchResNet {
		return fmt.Errorf("the checkpoint holds a %s (a CNN), not the ViT %s", ck.ResNet.Arch, n.m.Config.Name)
	}
	_, err := ck.LoadWeights(n.m, false)
	return err
}

// ResNetSpec is a ResNet's configuration as a checkpoint records it
// (metadata "vit_train.resnet").
type ResNetSpec struct {
	Arch       string `json:"arch"`
	Channels   int    `json:"in_chans"`
	ImageSize  int    `json:"img_size"`
	NumClasses int    `json:"num_classes"`
}

func (s ResNetSpec) config() resnet.Config {
	return resnet.Config{Arch: s.Arch, Channels: s.Channels, ImageSize: s.ImageSize, NumClasses: s.NumClasses, Dtype: tensor.Float32}
}

// IsResNet reports whether name is one of the ResNet architectures
// (resnet20, resnet56, resnet18, …) rather than a ViT preset.
func IsResNet(name string) bool {
	for _, a := range resnet.Archs() {
		if strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

// resnetNet is a ResNet as a network.
type resnetNet struct {
	spec ResNetSpec
	m    *resnet.Model
}

func newResNet(spec ResNetSpec, seed uint64) (*resnetNet, error) {
	if spec.ImageSize < 1 {
		return nil, fmt.Errorf("model %s: img_size %d must be positive (set model.img_size)", spec.Arch, spec.ImageSize)
	}
	m, err := resnet.New(spec.config(), seed)
	if err != nil {
		return nil, err
	}
	return &resnetNet{spec: spec, m: m}, nil
}

func (n *resnetNet) Name() string { return n.spec.Arch }

func (n *resnetNet) Input() (int, int) { return n.spec.Channels, n.spec.ImageSize }

func (n *resnetNet) NumClasses() int { return n.spec.NumClasses }

func (n *resnetNet) Describe() string {
	count := 0
	for _, p := range n.m.Params() {
		count += p.Shape.TotalSize()
	}
	return fmt.Sprintf("model %s: %.2fM parameters, %d×%d input", n.spec.Arch, float64(count)/1e6, n.spec.ImageSize, n.spec.ImageSize)
}

func (n *resnetNet) Params() []optim.Param {
	ps := make([]optim.Param, len(n.m.Params()))
	for i, p := range n.m.Params() {
		ps[i] = optim.Param{Name: p.Name, Shape: p.Shape.Clone(), Data: p.Value.Data().([]float32)}
	}
	return ps
}

func (n *resnetNet) Tensors() []safetensors.Tensor {
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
func (n *resnetNet) Graph(batch int, training bool, _ *ops.Randomness) (*nn.Graph, error) {
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

// Load copies the checkpoint's parameters and running statistics; every
// tensor must be present with its shape, and no other.
func (n *resnetNet) Load(ck *Checkpoint) error {
	if ck.Arch != ArchResNet {
		return fmt.Errorf("the checkpoint holds the ViT %s, not a %s", ck.Model.Name, n.spec.Arch)
	}
	byName := make(map[string]safetensors.Tensor, len(ck.Params))
	for _, t := range ck.Params {
		byName[t.Name] = t
	}
	for _, p := range n.Tensors() {
		t, ok := byName[p.Name]
		if !ok {
			return fmt.Errorf("checkpoint has no tensor %q, which model %s needs", p.Name, n.spec.Arch)
		}
		delete(byName, p.Name)
		if !slices.Equal(t.Shape, []int(p.Shape)) {
			return fmt.Errorf("checkpoint tensor %q has shape %v, model %s needs %v", p.Name, t.Shape, n.spec.Arch, p.Shape)
		}
		copy(p.Data, t.Data)
	}
	for name := range byName {
		return fmt.Errorf("checkpoint has tensor %q, which model %s does not have", name, n.spec.Arch)
	}
	return nil
}
