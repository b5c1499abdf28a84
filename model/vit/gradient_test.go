package vit_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/internal/gradcheck"
	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/runner"
)

// TestWholeModelGradient checks d(loss)/d(param) of a whole tiny ViT and
// DeiT against central differences in float64, with dropout, attention
// dropout and drop-path active (their masks are fixed for a given step):
// with float32 products, whose training graph computes every token's
// rows in the last block, and with bfloat16 products, whose graph
// computes only the prefix tokens' rows there (the products of a float64
// graph stay float64 whatever the variant, so the check is as exact).
func TestWholeModelGradient(t *testing.T) {
	for _, tc := range []struct {
		distilled bool
		products  blas.Variant
	}{{false, blas.FP32}, {true, blas.FP32}, {false, blas.BF16}, {true, blas.BF16}} {
		distilled := tc.distilled
		cfg := vit.Tiny(distilled)
		cfg.DropRate, cfg.AttnDropRate, cfg.DropPathRate = 0.1, 0.1, 0.2
		m, err := gradcheck.ViT(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		m.Products = tc.products
		// Larger than timm's init so every path carries signal.
		rng := rand.New(rand.NewPCG(4, 4))
		for _, p := range m.Params {
			for i, d := 0, p.Value.Data().([]float64); i < len(d); i++ {
				d[i] += 0.3 * rng.NormFloat64()
			}
		}
		s := vit.LossStep(t, m, 3, true, 7)
		if err := s.Run(); err != nil {
			t.Fatal(err)
		}
		tokens := cfg.NumTokens()
		if !tc.products.IsFP32() {
			tokens = 1
			if distilled {
				tokens = 2
			}
		}
		if got, want := s.Blocks[len(s.Blocks)-1].Output.Shape(), (tensor.Shape{3, tokens, cfg.EmbedDim}); !got.Eq(want) {
			t.Fatalf("%s products, distilled=%v: the last block's output is %v, want %v", tc.products, distilled, got, want)
		}
		// A float64 step's gradients are read through gradcheck.Grad:
		// Step.Grad, the float32 accessor, refuses them, as it refuses a
		// bad index.
		if _, err := s.Grad(0); err == nil || !strings.Contains(err.Error(), "float64") {
			t.Errorf("Grad on a float64 step: want an error naming float64, got %v", err)
		}
		if _, err := s.Grad(len(m.Params)); err == nil {
			t.Error("Grad past the last parameter: want an error")
		}
		fwd, err := runner.Compile(s.G, s.Loss)
		if err != nil {
			t.Fatal(err)
		}
		loss := func() float64 {
			if err := fwd.Run(); err != nil {
				t.Fatal(err)
			}
			return fwd.Value(s.Loss).Data().(float64)
		}
		const eps = 1e-6
		checked := 0
		for i, p := range m.Params {
			g, err := gradcheck.Grad(s, i)
			if err != nil {
				t.Fatal(err)
			}
			grad := append([]float64(nil), g...) // a copy: Grad returns the step's buffer
			x := p.Value.Data().([]float64)
			for _, e := range []int{0, len(x) / 2, len(x) - 1} {
				num := gradcheck.CentralDifference(loss, x, e, eps)
				if d := math.Abs(num-grad[e]) / math.Max(1, math.Abs(num)); d > 1e-6 {
					t.Errorf("%s products, distilled=%v %s[%d]: analytic %.9g numeric %.9g", tc.products, distilled, p.Name, e, grad[e], num)
				}
				checked++
			}
		}
		t.Logf("%s products, distilled=%v: %d gradient entries over %d parameters checked", tc.products, distilled, checked, len(m.Params))
	}
}
