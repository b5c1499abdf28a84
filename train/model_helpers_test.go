package train

import (
	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/model"
)

func newModel(c model.Config) (*model.ViT, error) { return model.New(c, 0) }

func mixInfo(lam float64) augment.MixInfo { return augment.MixInfo{Lam: lam} }
