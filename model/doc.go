// Package model is the one place every architecture meets: the Network
// interface each implements, the Config each defines and a Spec carries,
// and the registry through which each architecture (model/vit,
// model/resnet, and any other that calls Register) makes its presets,
// checkpoints and builders known. Training, evaluation, prediction,
// export, logits, fine-tuning and EMA work on a Network and a Spec and
// never ask which architecture they are.
//
// network.go holds the Network and Config interfaces and the Spec;
// registry.go the registry (Register, Lookup, Create, New, Names,
// DecodeSpec, EncodeConfig); overrides.go the Overrides a preset takes,
// the one list of their keys that configurations and flags read; load.go loading a checkpoint's tensors into
// a Network by name; check.go the shape checks of those tensors; onnx.go
// the ONNX writer an architecture implements.
package model
