package main

// The tests load the study's run configurations as vit-train does, which
// name ViTs and ResNets: their architectures register themselves with
// package model when imported, as in cmd/vit-train.
import (
	_ "github.com/vit-train/vit-train/model/resnet"
	_ "github.com/vit-train/vit-train/model/vit"
)
