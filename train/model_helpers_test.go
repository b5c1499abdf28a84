package train

import (
	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
)

func newModel(c vit.Config) (model.Network, error) { return c.Build(0) }

func mixInfo(lam float64) augment.MixInfo { return augment.MixInfo{Lam: lam} }
