package model

import (
	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/optim"
)

// Network is a model that a run trains, evaluates, predicts with, exports
// or distils from, whatever its architecture.
type Network interface {
	// Spec is the configuration a checkpoint records to rebuild the network.
	Spec() Spec
	// Describe summarises the network in one line.
	Describe() string
	// Params are the trainable parameters, sharing the network's memory and
	// aligned with every graph's ParamNodes.
	Params() []optim.Param
	// Tensors are what a checkpoint stores: the parameters and any buffers
	// (batch-norm running statistics), sharing the network's memory.
	Tensors() []safetensors.Tensor
	// Graph builds a forward graph for batch images. A training graph
	// applies dropout, drop-path and batch statistics (rng draws the
	// random masks; nil for an evaluation graph).
	Graph(batch int, training bool, rng *ops.Randomness) (*nn.Graph, error)
	// SetPrecision makes the graphs built from now on (and those of a
	// SharingWeights copy made after) run their matrix products in v's
	// arithmetic: linear layers, the patch embedding, attention's products
	// and convolutions, forward and backward. Everything else (softmax,
	// normalisations, losses, reductions, the weights) stays float32.
	SetPrecision(v blas.Variant)
	// SharingWeights returns a network of the same spec whose parameters
	// are backed by weights (aligned with Params), such as an optimiser's
	// EMA weights; buffers are shared with this network.
	SharingWeights(weights [][]float32) (Network, error)
}

// Config is an architecture's own configuration: what a Spec carries and
// a checkpoint stores (as JSON, under the architecture's ConfigKey).
// Configs are comparable with ==.
type Config interface {
	// Architecture is the registered name of the architecture ("vit",
	// "resnet").
	Architecture() string
	// ModelName is the preset or model name ("vit_fmnist_patch4_28",
	// "resnet20", or a custom name an imported model carries).
	ModelName() string
	// InputShape is the (channels, image size) the network takes: images
	// (B, channels, size, size).
	InputShape() (channels, size int)
	// Classes is the width of the logits (B, Classes).
	Classes() int
	// WithInput returns the configuration with another input size and
	// class count; 0 keeps the current value.
	WithInput(size, classes int) Config
	// Resolve fills the unset (zero) channels, image size and class count
	// from the data.
	Resolve(channels, size, classes int) Config
	// Override returns the configuration with o applied as to a preset
	// (see Overrides), validated; a field the architecture does not have is
	// an error naming it.
	Override(o Overrides) (Config, error)
	// Summary describes the architecture's shape in one line ("patch 16,
	// dim 768, depth 12, 12 heads, MLP 3072").
	Summary() string
	// ParamCount is the number of trainable parameters of a valid
	// configuration (the fc's included once the class count is known).
	ParamCount() int
	// ForwardFLOPs is the FLOPs of one image's forward pass, 2 × the
	// multiply-adds of its matrix products and convolutions (what FLOP
	// counts of ViTs and ResNets usually count); 0 while the input size is
	// unset.
	ForwardFLOPs() int64
	// Validate reports a configuration Build cannot build, naming the
	// field and value.
	Validate() error
	// Build builds the network, initialised reproducibly from seed.
	Build(seed uint64) (Network, error)
	// CheckTensors checks, without building the network, that tensors are
	// exactly the network's parameters and buffers, by name and shape, and
	// that the configuration is one a file of that size can describe.
	CheckTensors(tensors []safetensors.Tensor) error
	// NoWeightDecay names the parameters that get no weight decay whatever
	// their rank (timm's no_weight_decay()).
	NoWeightDecay() []string
	// LayerMap assigns every parameter a layer for layer-wise
	// learning-rate decay (timm's group_matcher).
	LayerMap() optim.LayerMap
	// IsHead reports whether the named parameter belongs to a
	// classification head: what init.freeze_backbone trains and what a new
	// class count replaces.
	IsHead(name string) bool
	// Convert converts a checkpoint tensor t, saved from a network of
	// configuration from, whose shape differs from this network's, when the
	// architecture knows how (a ViT resamples pos_embed to a new patch
	// grid); ok is false when it does not.
	Convert(t safetensors.Tensor, from Config) (data []float32, note string, ok bool, err error)
	// PyTorchLoad is the Python line that loads a state dict of the
	// network's Tensors, saved as safetensors at path, into the PyTorch
	// model of the same configuration (timm's, torchvision's).
	PyTorchLoad(path string) string
}

// Spec is everything needed to rebuild a network: its architecture's
// configuration. The zero Spec names no network. Specs are comparable
// with ==.
type Spec struct {
	Config Config
}

// SpecOf is the spec of a network of configuration c.
func SpecOf(c Config) Spec { return Spec{Config: c} }

// Arch is the architecture's registered name; "" for the zero Spec.
func (s Spec) Arch() string {
	if s.Config == nil {
		return ""
	}
	return s.Config.Architecture()
}

// Name is the network's name.
func (s Spec) Name() string {
	if s.Config == nil {
		return ""
	}
	return s.Config.ModelName()
}

// Input is the (channels, image size) the network takes.
func (s Spec) Input() (channels, size int) { return s.Config.InputShape() }

// NumClasses is the width of the network's logits.
func (s Spec) NumClasses() int { return s.Config.Classes() }

// WithInput returns the spec with another input size and class count; 0
// keeps the current value.
func (s Spec) WithInput(size, classes int) Spec { return Spec{s.Config.WithInput(size, classes)} }

// Resolve fills the spec's unset (zero) channels, image size and class
// count from the data.
func (s Spec) Resolve(channels, size, classes int) Spec {
	return Spec{s.Config.Resolve(channels, size, classes)}
}

// Validate reports a spec that New cannot build, naming the field and value.
func (s Spec) Validate() error {
	if s.Config == nil {
		return errNoConfig
	}
	return s.Config.Validate()
}

// Keep returns v, or old when v is 0: how overrides and resolutions treat
// unset fields.
func Keep(v, old int) int {
	if v == 0 {
		return old
	}
	return v
}

// Distillable is implemented by the configurations of networks that
// DeiT's distillation objective can train: those with tokens (a ViT, with
// or without a distillation token).
type Distillable interface {
	Config
	Distillable() bool
}

// CanDistil reports whether spec's network can be trained with a
// distillation objective.
func CanDistil(spec Spec) bool {
	d, ok := spec.Config.(Distillable)
	return ok && d.Distillable()
}

// Tokens is the sequence a token network (a ViT) works on: Prefix tokens
// ([CLS], and DeiT's distillation token) first, then the Grid×Grid patches
// in row-major order, Count = Prefix + Grid² in all. Attention maps are
// (Count, Count) over it, and a position embedding is (1, Count, width).
type Tokens struct {
	Count  int // the sequence length
	Prefix int // tokens before the patches
	Grid   int // patches along each side
}

// Tokenized is implemented by the configurations of networks that work on
// a sequence of patch tokens (a ViT), for what only they have: attention
// maps over the patches, position embeddings.
type Tokenized interface {
	Config
	Tokens() Tokens
}

// TokensOf returns the token sequence of spec's network; ok is false for
// a network without one (a ResNet).
func TokensOf(spec Spec) (t Tokens, ok bool) {
	c, ok := spec.Config.(Tokenized)
	if !ok {
		return Tokens{}, false
	}
	return c.Tokens(), true
}
