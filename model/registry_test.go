package model_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/resnet"
	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/nn/ops"
)

// smallSpec is the registered model name at a size that keeps the test
// fast: 32 px input (8 px for the CIFAR ResNets) and at most two encoder
// blocks (one for the widest ViTs), with every kind of parameter the
// full-size model has. The full-size parameter counts are checked against
// timm's and torchvision's without allocating (model/vit
// TestPresetParamCountsMatchTimm, model/resnet TestNumParams*).
func smallSpec(t *testing.T, name string) model.Spec {
	t.Helper()
	spec, err := model.Create(name, model.Overrides{NumClasses: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := spec.Config.(resnet.Config); ok {
		size := 32
		if isCIFAR(name) {
			size = 8
		}
		return spec.Resolve(3, size, 5)
	}
	c := spec.Config.(vit.Config)
	c.ImageSize = 2 * c.PatchSize
	c.Depth = min(c.Depth, 2)
	if c.EmbedDim >= 768 {
		c.Depth = 1
	}
	return model.SpecOf(c)
}

// isCIFAR reports whether name is one of the CIFAR ResNets (3×3 stem).
func isCIFAR(name string) bool {
	switch name {
	case "resnet20", "resnet32", "resnet44", "resnet56", "resnet110":
		return true
	}
	return false
}

// TestEveryRegisteredModelTrains builds every registered model (ViTs,
// DeiTs, distilled DeiTs and ResNets), runs a training forward and
// backward pass on random images with a cross-entropy loss on every head,
// and checks that every parameter gets a finite, non-zero gradient.
func TestEveryRegisteredModelTrains(t *testing.T) {
	for _, name := range model.Names() {
		t.Run(name, func(t *testing.T) {
			checkTrains(t, smallSpec(t, name))
		})
	}
}

func checkTrains(t *testing.T, spec model.Spec) {
	const batch = 2
	net, err := model.New(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	g, err := net.Graph(batch, true, ops.NewRandomness(1))
	if err != nil {
		t.Fatal(err)
	}
	classes := spec.NumClasses()
	targetsNode, targets := g.Input("targets", batch, classes)
	loss, err := ops.SoftTargetCrossEntropy(g.Logits, targetsNode)
	if err != nil {
		t.Fatal(err)
	}
	if g.DistLogits != nil {
		dist, err := ops.SoftTargetCrossEntropy(g.DistLogits, targetsNode)
		if err != nil {
			t.Fatal(err)
		}
		if loss, err = ops.Combine([]float64{0.5, 0.5}, loss, dist); err != nil {
			t.Fatal(err)
		}
	}
	step, err := g.Differentiate(loss)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 3))
	images, err := g.Float32Images()
	if err != nil {
		t.Fatal(err)
	}
	for i := range images {
		images[i] = float32(rng.NormFloat64())
	}
	soft := targets.Data().([]float32)
	for b := range batch {
		soft[b*classes+b%classes] = 1
	}
	if err := step.Run(); err != nil {
		t.Fatal(err)
	}
	if l := step.LossValue(); math.IsNaN(l) || math.IsInf(l, 0) || l <= 0 {
		t.Fatalf("loss %g", l)
	}
	for i, p := range net.Params() {
		grad, err := step.Grad(i)
		if err != nil {
			t.Fatal(err)
		}
		nonZero := false
		for _, v := range grad {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("%s: gradient has %g", p.Name, v)
			}
			nonZero = nonZero || v != 0
		}
		if !nonZero {
			t.Errorf("%s %v: gradient is zero", p.Name, p.Shape)
		}
	}
}

// A ViT's configuration gives its token sequence, [CLS] (and the
// distillation token) before the patch grid; a ResNet has none.
func TestTokensOf(t *testing.T) {
	for _, c := range []struct {
		name string
		want model.Tokens
		ok   bool
	}{
		{"vit_base_patch16_224", model.Tokens{Count: 197, Prefix: 1, Grid: 14}, true},
		{"deit_tiny_distilled_patch16_224", model.Tokens{Count: 198, Prefix: 2, Grid: 14}, true},
		{"vit_large_patch32_224", model.Tokens{Count: 50, Prefix: 1, Grid: 7}, true},
		{"resnet50", model.Tokens{}, false},
	} {
		spec, err := model.Create(c.name, model.Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := model.TokensOf(spec); got != c.want || ok != c.ok {
			t.Errorf("%s: TokensOf = %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
