package train

// The tests train, resume, distil and evaluate ViTs and ResNets: their
// architectures register themselves with package model when imported, as
// in a program that links train (cmd/vit-train).
import (
	_ "github.com/vit-train/vit-train/model/resnet"
	_ "github.com/vit-train/vit-train/model/vit"
)
