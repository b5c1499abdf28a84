// Package model is the one place that knows the model families: the
// Network interface every architecture implements (ViT and DeiT from
// model/vit, the ResNets from model/resnet), the Spec a checkpoint
// records to rebuild a network, and the registry that creates networks by
// name. Training, evaluation, prediction, export, logits, fine-tuning and
// EMA work on a Network and never ask which architecture it is.
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
	// Name is the preset or architecture name ("vit_fmnist_patch4_28",
	// "resnet20", or a custom name an imported model carries).
	Name() string
	// Spec is the configuration a checkpoint records to rebuild the network.
	Spec() Spec
	// Input is the (channels, image size) the network takes: images
	// (B, channels, size, size).
	Input() (channels, size int)
	// NumClasses is the width of the logits (B, NumClasses).
	NumClasses() int
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
	// PyTorchLoad is the Python line that loads a state dict of Tensors,
	// saved as safetensors at path, into the PyTorch model of the same
	// configuration (timm's VisionTransformer, torchvision's ResNet).
	PyTorchLoad(path string) string
	// SharingWeights returns a network of the same spec whose parameters
	// are backed by weights (aligned with Params), such as an optimiser's
	// EMA weights; buffers are shared with this network.
	SharingWeights(weights [][]float32) (Network, error)

	// targets lists what Load fills, in Tensors order.
	targets() []target
	// adapt converts a tensor whose shape differs from the network's, when
	// the architecture knows how (a ViT resamples pos_embed to a new patch
	// grid); ok is false when it does not.
	adapt(t safetensors.Tensor, from Spec) (data []float32, note string, ok bool, err error)
}
