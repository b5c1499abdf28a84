// Package resnet is the ResNet family, used as the CNN teacher for DeiT
// distillation: He et al.'s CIFAR ResNets (resnet20/32/44/56/110) and
// torchvision's ImageNet ResNets (resnet18/34/50/101/152), with
// torchvision's parameter names (conv1.weight, bn1.running_mean,
// layer1.0.conv1.weight, layer2.0.downsample.0.weight, fc.bias, …) so that
// PyTorch state dicts map one to one.
//
// The CIFAR models have a 3×3 stride-1 stem and three stages of 16, 32 and
// 64 channels with n = (depth − 2)/6 basic blocks each; where a block
// changes shape, the shortcut is a 1×1 convolution and a batch norm
// (option B, laid out as torchvision's downsample.0 / downsample.1, as in
// chenyaofo/pytorch-cifar-models). The ImageNet models have the 7×7
// stride-2 stem and 3×3 stride-2 max pool, basic blocks (18, 34) or
// bottlenecks with the stride on the 3×3 convolution (50, 101, 152).
package resnet

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
)

// BuildConfig selects a model.
type BuildConfig struct {
	Arch       string // one of Archs(): "resnet20", "resnet56", "resnet18", "resnet50", …
	Channels   int    // input channels (3 for RGB, 1 for grey); 0 means 3
	ImageSize  int    // input height and width that Build accepts; 0 accepts any
	NumClasses int    // outputs of fc
	// Products is the arithmetic of the convolutions' and fc's matrix
	// products and their gradients; the zero value is float32.
	Products blas.Variant
}

func (c BuildConfig) withDefaults() BuildConfig {
	if c.Channels == 0 {
		c.Channels = 3
	}
	return c
}

func (c BuildConfig) validate() (arch, error) {
	a, err := lookupArch(c.Arch)
	if err != nil {
		return arch{}, err
	}
	switch {
	case c.Channels < 1:
		return arch{}, fmt.Errorf("resnet: BuildConfig.Channels %d must be positive", c.Channels)
	case c.NumClasses < 1:
		return arch{}, fmt.Errorf("resnet: BuildConfig.NumClasses %d must be positive", c.NumClasses)
	case c.ImageSize < 0:
		return arch{}, fmt.Errorf("resnet: BuildConfig.ImageSize %d must not be negative", c.ImageSize)
	}
	return a, nil
}

// Param is one named tensor of the model.
type Param struct {
	Name  string
	Shape tensor.Shape
	Value *tensor.Dense
}

// Model holds a ResNet's parameters and batch-norm buffers. Graphs built
// from it (Build) read these tensors directly, so an update in place is
// seen by every graph.
type Model struct {
	cfg     BuildConfig
	plan    plan
	params  []Param
	buffers []Param
	bns     map[string]*ops.BatchNormState // by batch-norm name, e.g. "layer1.0.bn2"
}

// New returns a model initialised as torchvision does: convolution weights
// Kaiming-normal with fan_out and ReLU gain (std √(2/(out·k·k))), batch
// norms with weight 1, bias 0, running mean 0 and running variance 1, and
// fc uniform in ±1/√fan_in (PyTorch's nn.Linear default). seed fixes the
// draws.
func New(cfg BuildConfig, seed uint64) (*Model, error) {
	cfg = cfg.withDefaults()
	a, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	m := &Model{cfg: cfg, plan: newPlan(a, cfg.Channels), bns: make(map[string]*ops.BatchNormState)}
	rng := rand.New(rand.NewPCG(seed, 0x5265734e6574))
	for _, u := range m.plan.units() {
		std := math.Sqrt(2 / float64(u.out*u.kernel*u.kernel))
		m.addParam(u.conv+".weight", tensor.Shape{u.out, u.in, u.kernel, u.kernel}, func() float64 { return rng.NormFloat64() * std })
		m.addBatchNorm(u.bn, u.out)
	}
	bound := 1 / math.Sqrt(float64(m.plan.features))
	uniform := func() float64 { return (2*rng.Float64() - 1) * bound }
	m.addParam("fc.weight", tensor.Shape{cfg.NumClasses, m.plan.features}, uniform)
	m.addParam("fc.bias", tensor.Shape{cfg.NumClasses}, uniform)
	return m, nil
}

func (m *Model) addParam(name string, shape tensor.Shape, draw func() float64) {
	d := make([]float32, shape.TotalSize())
	for i := range d {
		d[i] = float32(draw())
	}
	m.params = append(m.params, Param{Name: name, Shape: shape, Value: tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))})
}

// dtype is the parameters' dtype, which the graphs take: float32 (float64
// only in the gradient checks, which convert the parameters).
func (m *Model) dtype() tensor.Dtype { return m.params[0].Value.Dtype() }

func (m *Model) addBatchNorm(name string, c int) {
	m.addParam(name+".weight", tensor.Shape{c}, func() float64 { return 1 })
	m.addParam(name+".bias", tensor.Shape{c}, func() float64 { return 0 })
	st := ops.NewBatchNormState(c)
	m.bns[name] = st
	m.buffers = append(m.buffers,
		Param{Name: name + ".running_mean", Shape: tensor.Shape{c}, Value: tensor.New(tensor.WithShape(c), tensor.WithBacking(st.RunningMean))},
		Param{Name: name + ".running_var", Shape: tensor.Shape{c}, Value: tensor.New(tensor.WithShape(c), tensor.WithBacking(st.RunningVar))})
}

// Params returns the trainable parameters in the order of PyTorch's
// named_parameters() for the same model.
func (m *Model) Params() []Param { return m.params }

// Buffers returns the batch norms' running_mean and running_var (C),
// float32 whatever the parameter dtype, in the order of PyTorch's
// named_buffers(). Their tensors share memory with the states the training
// graphs update. (PyTorch's num_batches_tracked buffers are the states'
// NumBatchesTracked.)
func (m *Model) Buffers() []Param { return m.buffers }

// NumParams returns the number of trainable parameters cfg's model has,
// without building it.
func NumParams(cfg BuildConfig) (int, error) {
	cfg = cfg.withDefaults()
	a, err := cfg.validate()
	if err != nil {
		return 0, err
	}
	p := newPlan(a, cfg.Channels)
	n := 0
	for _, u := range p.units() {
		n += u.out*u.in*u.kernel*u.kernel + 2*u.out
	}
	return n + cfg.NumClasses*p.features + cfg.NumClasses, nil
}

// SetProducts makes the graphs built from now on run their matrix
// products in v's arithmetic (see BuildConfig.Products).
func (m *Model) SetProducts(v blas.Variant) { m.cfg.Products = v }

// SharingWeights returns a model of the same configuration whose trainable
// parameters are backed by the given slices (aligned with Params), such as
// an optimiser's EMA weights, and whose batch norms share m's running
// statistics, so that graphs built from it evaluate those weights.
func (m *Model) SharingWeights(weights [][]float32) (*Model, error) {
	if m.dtype() != tensor.Float32 {
		return nil, fmt.Errorf("resnet: SharingWeights needs a float32 model")
	}
	if len(weights) != len(m.params) {
		return nil, fmt.Errorf("resnet: %d weight slices for %d parameters", len(weights), len(m.params))
	}
	out := &Model{cfg: m.cfg, plan: m.plan, buffers: m.buffers, bns: m.bns}
	for i, p := range m.params {
		if len(weights[i]) != p.Shape.TotalSize() {
			return nil, fmt.Errorf("resnet: weights for %s have %d values, want %d", p.Name, len(weights[i]), p.Shape.TotalSize())
		}
		v := tensor.New(tensor.WithShape(p.Shape...), tensor.WithBacking(weights[i]))
		out.params = append(out.params, Param{Name: p.Name, Shape: p.Shape.Clone(), Value: v})
	}
	return out, nil
}
