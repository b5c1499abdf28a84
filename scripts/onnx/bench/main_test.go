package main

import (
	"testing"

	"github.com/vit-train/vit-train/model"
)

// The program links the architectures its --model names: the default
// model and a ResNet are known to the registry.
func TestModelsAreRegistered(t *testing.T) {
	for _, name := range []string{"vit_base_patch16_224", "resnet50"} {
		if _, err := model.Create(name, model.Overrides{}); err != nil {
			t.Errorf("--model %s: %v", name, err)
		}
	}
}
