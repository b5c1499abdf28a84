package ops_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
)

// TestLowPrecisionOps checks Linear, attention and Conv2d with their
// products in each low-precision variant this CPU runs: forward values
// and gradients within the variant's rounding of the float64 ones, and
// not those of float32 products (the variant took effect). Each op's
// forward product is at least 64 steps long (q·kᵀ's heads of 64, the
// convolution's 8×3×3), the length from which blas.GemmAs takes a
// low-precision variant, and attention's heads of 128 tokens are as large
// as those whose products take it.
func TestLowPrecisionOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, v := range blas.Variants()[1:] {
		t.Run(string(v), func(t *testing.T) {
			if !v.Runs() {
				t.Skipf("the %s product does not run on this CPU or build", v)
			}
			for _, c := range []struct {
				name   string
				inputs []*tensor.Dense
				f      func(v blas.Variant) opstest.Func
			}{
				{"linear", []*tensor.Dense{opstest.Rand(rng, -1, 1, 2, 9, 64), opstest.Rand(rng, -1, 1, 24, 64), opstest.Rand(rng, -1, 1, 24)},
					func(v blas.Variant) opstest.Func {
						return func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
							return ops.LinearAs(v, in[0], in[1], in[2])
						}
					}},
				{"attention", []*tensor.Dense{opstest.Rand(rng, -1, 1, 1, 128, 384)},
					func(v blas.Variant) opstest.Func {
						return func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
							out, _, err := ops.NewAttentionAs(v, in[0], 2, 0, nil)
							return out, err
						}
					}},
				{"conv2d", []*tensor.Dense{opstest.Rand(rng, -1, 1, 2, 8, 8, 8), opstest.Rand(rng, -1, 1, 5, 8, 3, 3), opstest.Rand(rng, -1, 1, 5)},
					func(v blas.Variant) opstest.Func {
						return func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
							return ops.Conv2dAs(v, in[0], in[1], in[2], 1, 1)
						}
					}},
			} {
				wrt := make([]int, len(c.inputs))
				for i := range wrt {
					wrt[i] = i
				}
				// bfloat16 keeps 8 bits, float16 11: a few units of the last
				// place of the sums' scale.
				opstest.AgreeF32(t, c.f(v), c.inputs, wrt, 0.01)
				low, err := opstest.Eval(c.f(v), c.inputs, wrt, tensor.Float32, 1)
				if err != nil {
					t.Fatal(err)
				}
				full, err := opstest.Eval(c.f(blas.FP32), c.inputs, wrt, tensor.Float32, 1)
				if err != nil {
					t.Fatal(err)
				}
				diff := 0.0
				for i := range low.Out {
					diff = max(diff, math.Abs(low.Out[i]-full.Out[i]))
				}
				if diff < 1e-5 {
					t.Errorf("%s in %s: outputs within %g of float32 products: the variant did not take effect", c.name, v, diff)
				}
			}
		})
	}
}
