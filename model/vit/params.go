package vit

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/internal/hugepages"
	"github.com/vit-train/vit-train/nn/blas"
)

// initKind is how a parameter is initialised, following timm's
// VisionTransformer.init_weights (mode ”).
type initKind int

const (
	initTruncNormal initKind = iota // trunc_normal_(std=0.02, a=-2, b=2): Linear weights, pos_embed, dist_token
	initZeros                       // biases, LayerNorm bias
	initOnes                        // LayerNorm weight
	initCLS                         // normal_(std=1e-6): cls_token
	initConvUniform                 // PyTorch Conv2d default: U(±1/√fan_in), patch_embed.proj
)

// ParamSpec names one parameter and its shape in timm's layout.
type ParamSpec struct {
	Name  string
	Shape []int
	init  initKind
	fanIn int
}

// Size is the number of elements.
func (s ParamSpec) Size() int {
	n := 1
	for _, d := range s.Shape {
		n *= d
	}
	return n
}

// ParamSpecs lists the parameters in timm's state_dict order, with timm's
// names and PyTorch layouts: Linear weights are (out, in), the patch
// projection is a conv weight (D, C, P, P).
func (c Config) ParamSpecs() []ParamSpec {
	d, cpp := c.EmbedDim, c.Channels*c.PatchSize*c.PatchSize
	specs := []ParamSpec{{Name: "cls_token", Shape: []int{1, 1, d}, init: initCLS}}
	if c.Distilled {
		specs = append(specs, ParamSpec{Name: "dist_token", Shape: []int{1, 1, d}, init: initTruncNormal})
	}
	specs = append(specs,
		ParamSpec{Name: "pos_embed", Shape: []int{1, c.NumTokens(), d}, init: initTruncNormal},
		ParamSpec{Name: "patch_embed.proj.weight", Shape: []int{d, c.Channels, c.PatchSize, c.PatchSize}, init: initConvUniform, fanIn: cpp},
		ParamSpec{Name: "patch_embed.proj.bias", Shape: []int{d}, init: initConvUniform, fanIn: cpp},
	)
	linear := func(name string, out, in int, bias bool) {
		specs = append(specs, ParamSpec{Name: name + ".weight", Shape: []int{out, in}, init: initTruncNormal})
		if bias {
			specs = append(specs, ParamSpec{Name: name + ".bias", Shape: []int{out}, init: initZeros})
		}
	}
	norm := func(name string) {
		specs = append(specs,
			ParamSpec{Name: name + ".weight", Shape: []int{d}, init: initOnes},
			ParamSpec{Name: name + ".bias", Shape: []int{d}, init: initZeros})
	}
	for i := 0; i < c.Depth; i++ {
		b := fmt.Sprintf("blocks.%d.", i)
		norm(b + "norm1")
		linear(b+"attn.qkv", 3*d, d, c.QKVBias)
		linear(b+"attn.proj", d, d, true)
		norm(b + "norm2")
		linear(b+"mlp.fc1", c.MLPDim, d, true)
		linear(b+"mlp.fc2", d, c.MLPDim, true)
	}
	norm("norm")
	linear("head", c.NumClasses, d, true)
	if c.Distilled {
		linear("head_dist", c.NumClasses, d, true)
	}
	return specs
}

// ParamCount is the number of trainable parameters.
func (c Config) ParamCount() int {
	n := 0
	for _, s := range c.ParamSpecs() {
		n += s.Size()
	}
	return n
}

// Param is one named parameter tensor, shared by every graph built from the model.
type Param struct {
	Name  string
	Value *tensor.Dense
}

// Float32s returns the parameter's data when the model is float32.
func (p *Param) Float32s() []float32 { return p.Value.Data().([]float32) }

// ViT holds a model's configuration and parameters. Graphs built from it
// (BuildGraph) read the parameter tensors in place, so updating them updates
// every graph.
type ViT struct {
	Config Config
	// Products is the arithmetic of the graphs' matrix products (linear
	// layers, the patch embedding, attention's q·kᵀ and P·v, and their
	// gradients); the zero value is float32.
	Products blas.Variant
	// Params are float32 tensors (float64 ones only in the gradient
	// checks, internal/gradcheck); graphs take their dtype.
	Params []*Param
}

// New returns a float32 ViT initialised as timm does, reproducibly from seed.
func New(cfg Config, seed uint64) (*ViT, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &ViT{Config: cfg}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	for _, s := range cfg.ParamSpecs() {
		vals := make([]float64, s.Size())
		initValues(vals, s, rng)
		f := hugepages.Make[float32](len(vals))
		for j, v := range vals {
			f[j] = float32(v)
		}
		m.Params = append(m.Params, &Param{Name: s.Name, Value: tensor.New(tensor.WithShape(s.Shape...), tensor.WithBacking(f))})
	}
	return m, nil
}

// dtype is the parameters' dtype, which the graphs take.
func (m *ViT) dtype() tensor.Dtype { return m.Params[0].Value.Dtype() }

func initValues(v []float64, s ParamSpec, rng *rand.Rand) {
	switch s.init {
	case initTruncNormal:
		for i := range v {
			v[i] = truncNormal(rng, 0.02, -2, 2)
		}
	case initOnes:
		for i := range v {
			v[i] = 1
		}
	case initCLS:
		for i := range v {
			v[i] = 1e-6 * rng.NormFloat64()
		}
	case initConvUniform:
		bound := 1 / math.Sqrt(float64(s.fanIn))
		for i := range v {
			v[i] = (2*rng.Float64() - 1) * bound
		}
	}
}

// truncNormal draws N(0, std²) conditioned on [a, b], by rejection.
func truncNormal(rng *rand.Rand, std, a, b float64) float64 {
	for {
		if x := std * rng.NormFloat64(); x >= a && x <= b {
			return x
		}
	}
}

// SharingWeights returns a model of the same configuration whose parameters
// are backed by the given slices (aligned with m.Params), such as an
// optimiser's EMA weights, so that graphs built from it evaluate them.
func (m *ViT) SharingWeights(weights [][]float32) (*ViT, error) {
	if m.dtype() != tensor.Float32 {
		return nil, fmt.Errorf("model: SharingWeights needs a float32 model")
	}
	if len(weights) != len(m.Params) {
		return nil, fmt.Errorf("model: %d weight slices for %d parameters", len(weights), len(m.Params))
	}
	out := &ViT{Config: m.Config}
	for i, p := range m.Params {
		shape := p.Value.Shape()
		if len(weights[i]) != shape.TotalSize() {
			return nil, fmt.Errorf("model: weights for %s have %d values, want %d", p.Name, len(weights[i]), shape.TotalSize())
		}
		out.Params = append(out.Params, &Param{Name: p.Name, Value: tensor.New(tensor.WithShape(shape...), tensor.WithBacking(weights[i]))})
	}
	return out, nil
}

// Tensors returns the parameters of a float32 model as named tensors
// sharing its memory, in Params order: what a checkpoint or a timm state
// dict stores.
func (m *ViT) Tensors() []safetensors.Tensor {
	out := make([]safetensors.Tensor, len(m.Params))
	for i, p := range m.Params {
		out[i] = safetensors.Tensor{Name: p.Name, Shape: p.Value.Shape().Clone(), Data: p.Float32s()}
	}
	return out
}
