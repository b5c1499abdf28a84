package optim

import (
	"math/rand/v2"
	"testing"
)

// lsqGrad returns the gradient of ½·mean_n (w·x_n − y_n)² over the samples.
func lsqGrad(w []float64, xs [][]float64, ys []float64) []float64 {
	g := make([]float64, len(w))
	for n, x := range xs {
		r := -ys[n]
		for i := range w {
			r += w[i] * x[i]
		}
		for i := range g {
			g[i] += r * x[i] / float64(len(xs))
		}
	}
	return g
}

func toF32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

func TestAccumulationEqualsBigBatchGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const dim, samples = 5, 10
	w := make([]float64, dim)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	xs := make([][]float64, samples)
	ys := make([]float64, samples)
	for n := range xs {
		xs[n] = make([]float64, dim)
		for i := range xs[n] {
			xs[n][i] = rng.NormFloat64()
		}
		ys[n] = rng.NormFloat64()
	}
	params := []Param{{Name: "w", Shape: []int{1, dim}, Data: toF32(w)}}
	acc, err := NewAccumulator(params)
	if err != nil {
		t.Fatal(err)
	}
	// Twice, to check that the buffers are reused correctly after Reset.
	for round, cuts := range [][]int{{0, 4, 8, 10}, {0, 3, 10}} {
		acc.Reset()
		for k := 1; k < len(cuts); k++ {
			lo, hi := cuts[k-1], cuts[k]
			g := lsqGrad(w, xs[lo:hi], ys[lo:hi])
			if err := acc.Add([][]float32{toF32(g)}, float64(hi-lo)); err != nil {
				t.Fatal(err)
			}
		}
		if acc.Count() != len(cuts)-1 {
			t.Fatalf("round %d: Count = %d", round, acc.Count())
		}
		mean, err := acc.Mean()
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, "mean gradient", mean[0], lsqGrad(w, xs, ys), 1e-6)
		again, _ := acc.Mean()
		assertClose(t, "second Mean", again[0], lsqGrad(w, xs, ys), 1e-6)
		if err := acc.Add([][]float32{make([]float32, dim)}, 1); err == nil {
			t.Fatal("Add after Mean accepted")
		}
	}
}

func TestAccumulatorManyUnitsEqualWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	params := bigParams(rng)
	acc, err := NewAccumulator(params)
	if err != nil {
		t.Fatal(err)
	}
	var micro [][][]float32
	for range 3 {
		g := randomGrads(rng, params, 1)
		micro = append(micro, g)
		if err := acc.Add(g, 1); err != nil {
			t.Fatal(err)
		}
	}
	mean, err := acc.Mean()
	if err != nil {
		t.Fatal(err)
	}
	for i := range params {
		want := make([]float64, len(params[i].Data))
		for _, g := range micro {
			for j, v := range g[i] {
				want[j] += float64(v) / 3
			}
		}
		assertClose(t, params[i].Name, mean[i], want, 1e-6)
	}
}

func TestAccumulatorRejectsBadInput(t *testing.T) {
	acc, err := NewAccumulator([]Param{{Name: "w", Shape: []int{2}, Data: make([]float32, 2)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acc.Mean(); err == nil {
		t.Error("Mean of nothing accepted")
	}
	if err := acc.Add([][]float32{{1, 2}}, 0); err == nil {
		t.Error("weight 0 accepted")
	}
	if err := acc.Add([][]float32{{1}}, 1); err == nil {
		t.Error("short gradient accepted")
	}
}
