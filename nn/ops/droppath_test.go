package ops_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
)

func TestDropPathGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, shape := range [][]int{{6}, {8, 3}, {6, 3, 4}} {
		inputs := []*tensor.Dense{opstest.Rand(rng, -1, 1, shape...)}
		f := maskFunc(ops.DropPath, 0.5, 3, 1)
		opstest.GradCheck(t, f, inputs, []int{0}, opstest.Options{})
		opstest.AgreeF32(t, f, inputs, []int{0}, 1e-7)
	}
}

// TestDropPathDropsWholeSamples checks that each sample of x (B, N, D) is
// either zeroed or scaled by 1/(1−p) as a whole, with about 1−p kept, and
// that the backward applies the same decisions.
func TestDropPathDropsWholeSamples(t *testing.T) {
	const b, n, d, p = 20000, 3, 2, 0.2
	rng := rand.New(rand.NewPCG(15, 16))
	x := opstest.Rand(rng, 1, 2, b, n, d)
	xs := x.Data().([]float64)
	y, grads := fusedEval(t, maskFunc(ops.DropPath, p, 9, 4), []*tensor.Dense{x}, filled(1, b, n, d), []int{0}, tensor.Float64)
	kept := 0
	for s := range b {
		ys, gs := y[s*n*d:(s+1)*n*d], grads[0][s*n*d:(s+1)*n*d]
		keep := ys[0] != 0
		if keep {
			kept++
		}
		for i, v := range ys {
			want, wantG := 0.0, 0.0
			if keep {
				want, wantG = xs[s*n*d+i]/(1-p), 1/(1-p)
			}
			if math.Abs(v-want) > 1e-15 || math.Abs(gs[i]-wantG) > 1e-15 {
				t.Fatalf("sample %d element %d: y %g, dx %g; want %g, %g", s, i, v, gs[i], want, wantG)
			}
		}
	}
	// Binomial(20000, 0.8): standard deviation ≈ 57, so 1.5% is about 5σ.
	if frac := float64(kept) / b; math.Abs(frac-(1-p)) > 0.015 {
		t.Errorf("kept fraction %.4f, want %.2f", frac, 1-p)
	}
}

// TestDropPathDiffersFromDropout: the same Randomness stream gives
// Dropout one decision per element and DropPath one per sample.
func TestDropPathDiffersFromDropout(t *testing.T) {
	x := []*tensor.Dense{filled(1, 64, 50)}
	drop, _ := fusedEval(t, maskFunc(ops.Dropout, 0.5, 1, 0), x, nil, nil, tensor.Float64)
	path, _ := fusedEval(t, maskFunc(ops.DropPath, 0.5, 1, 0), x, nil, nil, tensor.Float64)
	if slices.Equal(drop, path) {
		t.Fatal("Dropout and DropPath drew the same mask")
	}
	mixed := false
	for s := range 64 {
		row := drop[s*50 : (s+1)*50]
		if slices.Contains(row, 0) && slices.Contains(row, 2) {
			mixed = true
		}
	}
	if !mixed {
		t.Error("Dropout never mixed kept and dropped elements within a sample")
	}
}
