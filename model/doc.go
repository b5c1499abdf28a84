// Package model is the one place every architecture meets: the Network
// interface each implements, the Config each defines and a Spec carries,
// and the registry through which each architecture (model/vit,
// model/resnet, and any other that calls Register) makes its presets,
// checkpoints and builders known. Training, evaluation, prediction,
// export, logits, fine-tuning and EMA work on a Network and a Spec and
// never ask which architecture they are.
//
// A program links the architectures it can name by importing their
// packages, as database/sql drivers are linked: cmd/vit-train imports
// model/vit and model/resnet, each of which registers itself from its
// init.
//
// network.go holds the Network and Config interfaces, the Spec and the
// optional interfaces a Config may add (Distillable; Tokenized, the token
// sequence that attention maps and position embeddings are laid out by);
// registry.go the registry (Register, Lookup, Create, New, Names,
// DecodeSpec, EncodeConfig); overrides.go the Overrides a preset takes,
// the one list of their keys that configurations and flags read; load.go loading a checkpoint's tensors into
// a Network by name; check.go the shape checks of those tensors; onnx.go
// the ONNX writer an architecture implements.
package model
