package train

import (
	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/model/vit"
)

func newModel(c vit.Config) (*vit.ViT, error) { return vit.New(c, 0) }

func mixInfo(lam float64) augment.MixInfo { return augment.MixInfo{Lam: lam} }
