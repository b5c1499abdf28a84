package vit

// The external tests (gradient_test.go, on a float64 ViT from
// internal/gradcheck, which imports this package) build the same steps as
// the internal ones.
var (
	Tiny     = tiny
	LossStep = lossStep
)
