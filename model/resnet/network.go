package resnet

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/optim"
)

// Architecture is the architecture's registered name: a Spec's Arch and a
// checkpoint's "vit_train.arch". (A Config's Arch is the model's name,
// torchvision's arch: resnet20, resnet50.)
const Architecture = "resnet"

// maxImageSize bounds the input size a checkpoint may record (a ResNet
// takes any size, so only its spec bounds it).
const maxImageSize = 1 << 14

func init() {
	model.Register(model.Architecture{
		Name:      Architecture,
		ConfigKey: "vit_train.resnet",
		Presets:   Archs,
		Preset:    preset,
		Decode: func(data []byte) (model.Config, error) {
			var s Config
			err := json.Unmarshal(data, &s)
			return s, err
		},
	})
}

// preset is the spec of ResNet name with overrides: no default input, so
// zero input fields stay zero until Resolve.
func preset(name string, o model.Overrides) (model.Config, bool, error) {
	if !slices.ContainsFunc(Archs(), func(a string) bool { return strings.EqualFold(a, name) }) {
		return nil, false, nil
	}
	c, err := Config{Arch: strings.ToLower(name)}.Override(o)
	return c, true, err
}

// Override sets the input size, class count and channels that o sets; a
// ResNet has no dropout, drop-path or ViT shape to override.
func (c Config) Override(o model.Overrides) (model.Config, error) {
	switch {
	case o.ChangesRegularisation():
		return nil, fmt.Errorf("model %s: %s apply to ViTs only", c.Arch, model.OverrideKeys(model.Regularisation))
	case o.ChangesShape():
		return nil, fmt.Errorf("model %s: %s apply to ViTs only", c.Arch, model.OverrideKeys(model.Shape))
	}
	if err := o.CheckNotNegative(model.Input); err != nil {
		return nil, fmt.Errorf("model %s: %w", c.Arch, err)
	}
	c.Channels = model.Keep(o.Channels, c.Channels)
	c.ImageSize = model.Keep(o.ImageSize, c.ImageSize)
	c.NumClasses = model.Keep(o.NumClasses, c.NumClasses)
	return c, nil
}

// Summary gives the family, stages and blocks.
func (c Config) Summary() string {
	a, err := lookupArch(c.Arch)
	if err != nil {
		return err.Error()
	}
	kind := "torchvision ResNet, basic blocks"
	switch {
	case a.cifar:
		kind = "CIFAR ResNet (He et al.), basic blocks"
	case a.bottleneck:
		kind = "torchvision ResNet, bottleneck blocks"
	}
	return fmt.Sprintf("%s, %v per stage, widths %v", kind, a.blocks, a.widths)
}

// ParamCount is NumParams of the spec's network; 0 for an invalid spec.
func (c Config) ParamCount() int {
	n, _ := NumParams(c.BuildConfig())
	return n
}

// ForwardFLOPs is 2 × MACs; 0 for an invalid spec or an unset input size.
func (c Config) ForwardFLOPs() int64 {
	n, _ := MACs(c.BuildConfig())
	return 2 * n
}

// Config is a ResNet's configuration as a model.Spec carries it and a
// checkpoint records it (metadata "vit_train.resnet").
type Config struct {
	Arch       string `json:"arch"`
	Channels   int    `json:"in_chans"`
	ImageSize  int    `json:"img_size"`
	NumClasses int    `json:"num_classes"`
}

// BuildConfig is the float32 model configuration of c.
func (c Config) BuildConfig() BuildConfig {
	return BuildConfig{Arch: c.Arch, Channels: c.Channels, ImageSize: c.ImageSize, NumClasses: c.NumClasses}
}

// Architecture is "resnet".
func (c Config) Architecture() string { return Architecture }

// ModelName is the ResNet's name ("resnet20").
func (c Config) ModelName() string { return c.Arch }

// InputShape is (Channels, ImageSize).
func (c Config) InputShape() (channels, size int) { return c.Channels, c.ImageSize }

// Classes is NumClasses.
func (c Config) Classes() int { return c.NumClasses }

// WithInput sets the input size and class count; a ResNet takes any size.
func (c Config) WithInput(size, classes int) model.Config {
	c.ImageSize = model.Keep(size, c.ImageSize)
	c.NumClasses = model.Keep(classes, c.NumClasses)
	return c
}

// Resolve fills the unset channels, image size and class count.
func (c Config) Resolve(channels, size, classes int) model.Config {
	c.Channels = model.Keep(c.Channels, channels)
	c.ImageSize = model.Keep(c.ImageSize, size)
	c.NumClasses = model.Keep(c.NumClasses, classes)
	return c
}

// Validate reports a spec Build cannot build.
func (c Config) Validate() error {
	if c.ImageSize < 1 {
		return fmt.Errorf("model %s: img_size %d must be positive (set model.img_size)", c.Arch, c.ImageSize)
	}
	_, err := NumParams(c.BuildConfig())
	return err
}

// Build builds the ResNet, initialised from seed.
func (c Config) Build(seed uint64) (model.Network, error) {
	m, err := New(c.BuildConfig(), seed)
	if err != nil {
		return nil, err
	}
	return &network{spec: c, m: m}, nil
}

// CheckTensors checks the spec against the parameter and buffer tensors.
func (c Config) CheckTensors(params []safetensors.Tensor) error {
	total := 0
	for _, t := range params {
		total += len(t.Data)
	}
	switch {
	case c.Channels < 1 || c.Channels > total:
		return fmt.Errorf("in_chans %d: want 1 to %d, the values the file holds", c.Channels, total)
	case c.NumClasses < 1 || c.NumClasses > total:
		return fmt.Errorf("num_classes %d: want 1 to %d, the values the file holds", c.NumClasses, total)
	case c.ImageSize < 1 || c.ImageSize > maxImageSize:
		return fmt.Errorf("img_size %d: want 1 to %d", c.ImageSize, maxImageSize)
	}
	n, err := NumParams(c.BuildConfig())
	if err != nil {
		return err
	}
	if n > total {
		return fmt.Errorf("%s with %d classes has %d parameters, but the file holds %d values", c.Arch, c.NumClasses, n, total)
	}
	ps, bufs, err := Shapes(c.BuildConfig())
	if err != nil {
		return err
	}
	var want []model.NamedShape
	for _, t := range append(ps, bufs...) {
		want = append(want, model.NamedShape{Name: t.Name, Shape: t.Shape})
	}
	return model.MatchTensors(want, params, "model "+c.Arch)
}

// NoWeightDecay is empty: as timm's param_groups_weight_decay does for a
// ResNet, only the rank-1 tensors (batch-norm weights and biases, fc.bias)
// go without weight decay, which optim's groups apply by rank.
func (c Config) NoWeightDecay() []string { return nil }

// LayerMap assigns layers by stage, as timm's ResNet.group_matcher
// (coarse): the stem (conv1, bn1) is layer 0, layer<k>.* is layer k, and
// fc is the last layer, one past the last stage.
func (c Config) LayerMap() optim.LayerMap {
	stages := 0
	if a, err := lookupArch(c.Arch); err == nil {
		stages = len(a.blocks)
	}
	return optim.LayerMap{MaxLayer: stages + 1, ID: func(name string) (int, error) {
		switch {
		case strings.HasPrefix(name, "conv1.") || strings.HasPrefix(name, "bn1."):
			return 0, nil
		case strings.HasPrefix(name, "fc."):
			return stages + 1, nil
		}
		if k, ok := stageOf(name); ok && k <= stages {
			return k, nil
		}
		return 0, fmt.Errorf("optim: param %q is not a parameter of %s (stem, layer1 to layer%d or fc)", name, c.Arch, stages)
	}}
}

// stageOf returns k for names "layer<k>.…".
func stageOf(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "layer")
	if !ok {
		return 0, false
	}
	idx, _, _ := strings.Cut(rest, ".")
	k, err := strconv.Atoi(idx)
	return k, err == nil && k >= 1
}

// IsHead reports whether name belongs to fc.
func (c Config) IsHead(name string) bool { return strings.HasPrefix(name, "fc.") }

// Convert knows no conversions: a ResNet takes any input size as it is.
func (c Config) Convert(safetensors.Tensor, model.Config) ([]float32, string, bool, error) {
	return nil, "", false, nil
}

// PyTorchLoad names torchvision's constructor for the ImageNet ResNets
// and the CIFAR layout (chenyaofo/pytorch-cifar-models, torchvision's
// names) for the others. strict=False because num_batches_tracked is not
// stored; a model with in_chans other than 3 needs its conv1 replaced
// first.
func (c Config) PyTorchLoad(path string) string {
	ctor := fmt.Sprintf("torchvision.models.%s(num_classes=%d)", c.Arch, c.NumClasses)
	if c.Channels != 3 || !slices.Contains([]string{"resnet18", "resnet34", "resnet50", "resnet101", "resnet152"}, c.Arch) {
		ctor = fmt.Sprintf("%s (torchvision names; in_chans=%d, num_classes=%d)", c.Arch, c.Channels, c.NumClasses)
	}
	return fmt.Sprintf("torchvision: %s.load_state_dict(safetensors.torch.load_file(%q), strict=False)", ctor, path)
}

// network is a ResNet as a model.Network.
type network struct {
	spec Config
	m    *Model
}

func (n *network) Spec() model.Spec { return model.SpecOf(n.spec) }

func (n *network) Describe() string {
	count := 0
	for _, p := range n.m.Params() {
		count += p.Shape.TotalSize()
	}
	return fmt.Sprintf("model %s: %.2fM parameters, %d×%d input", n.spec.Arch, float64(count)/1e6, n.spec.ImageSize, n.spec.ImageSize)
}

func (n *network) Params() []optim.Param {
	ps := make([]optim.Param, len(n.m.Params()))
	for i, p := range n.m.Params() {
		ps[i] = optim.Param{Name: p.Name, Shape: p.Shape.Clone(), Data: p.Value.Data().([]float32)}
	}
	return ps
}

func (n *network) Tensors() []safetensors.Tensor {
	var out []safetensors.Tensor
	for _, group := range [][]Param{n.m.Params(), n.m.Buffers()} {
		for _, p := range group {
			out = append(out, safetensors.Tensor{Name: p.Name, Shape: p.Shape.Clone(), Data: p.Value.Data().([]float32)})
		}
	}
	return out
}

func (n *network) SetPrecision(v blas.Variant) { n.m.SetProducts(v) }

// Graph builds the ResNet's forward pass. A training graph normalises with
// batch statistics and updates the running statistics on every run; an
// evaluation graph uses the running statistics and changes nothing.
func (n *network) Graph(batch int, training bool, _ *ops.Randomness) (*nn.Graph, error) {
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
	return &nn.Graph{Training: training, Batch: batch, G: g, Images: x, ImageData: img.Data(), Logits: logits, ParamNodes: nodes, FLOPs: n.spec.ForwardFLOPs()}, nil
}

func (n *network) SharingWeights(weights [][]float32) (model.Network, error) {
	m, err := n.m.SharingWeights(weights)
	if err != nil {
		return nil, err
	}
	return &network{spec: n.spec, m: m}, nil
}
