package viz

import (
	"fmt"

	"github.com/vit-train/vit-train/nn/blas"
)

// HeadMean averages one image's attention probabilities (H, N, N) over the
// heads, returning (N, N).
func HeadMean(probs []float64, heads, n int) ([]float64, error) {
	if heads < 1 || n < 1 || len(probs) != heads*n*n {
		return nil, fmt.Errorf("viz: attention has %d values, want heads*N*N = %d*%d*%d", len(probs), heads, n, n)
	}
	out := make([]float64, n*n)
	inv := 1 / float64(heads)
	for h := 0; h < heads; h++ {
		for i, v := range probs[h*n*n : (h+1)*n*n] {
			out[i] += v * inv
		}
	}
	return out, nil
}

// residualAttention turns a head-averaged attention matrix (N, N) into the
// rollout's per-layer matrix in place: A + I, each row renormalised to sum 1.
func residualAttention(a []float64, n int) {
	for r := 0; r < n; r++ {
		row := a[r*n : (r+1)*n]
		row[r]++
		var sum float64
		for _, v := range row {
			sum += v
		}
		if sum == 0 {
			continue
		}
		inv := 1 / sum
		for j := range row {
			row[j] *= inv
		}
	}
}

// Rollout computes attention rollout (Abnar & Zuidema, "Quantifying
// Attention Flow in Transformers", 2020) from every layer's attention
// probabilities of one image, layers[l] of shape (H, N, N), first layer
// first. Each layer's attention is averaged over the heads, the identity is
// added for the residual connection and the rows are renormalised; the
// layers are then multiplied through, last·…·first, giving the (N, N)
// attention of each output token (row) to each input token (column). Rows
// of row-stochastic inputs sum to 1.
func Rollout(layers [][]float64, heads, n int) ([]float64, error) {
	if len(layers) == 0 {
		return nil, fmt.Errorf("viz: rollout needs at least one layer")
	}
	joint := make([]float64, n*n)
	for i := 0; i < n; i++ {
		joint[i*n+i] = 1
	}
	next := make([]float64, n*n)
	for l, probs := range layers {
		a, err := HeadMean(probs, heads, n)
		if err != nil {
			return nil, fmt.Errorf("viz: rollout layer %d: %w", l, err)
		}
		residualAttention(a, n)
		blas.Gemm(false, false, n, n, n, 1, a, n, joint, n, 0, next, n)
		joint, next = next, joint
	}
	return joint, nil
}

// TokenMap returns row token of an (N, N) attention matrix restricted to
// the patch columns, i.e. the attention of that token to the N−prefix
// patches, in patch order (row-major over the patch grid).
func TokenMap(att []float64, n, token, prefix int) ([]float64, error) {
	if len(att) != n*n || token < 0 || token >= n || prefix < 0 || prefix >= n {
		return nil, fmt.Errorf("viz: token %d, prefix %d of a %d-value attention matrix with N = %d", token, prefix, len(att), n)
	}
	return append([]float64(nil), att[token*n+prefix:(token+1)*n]...), nil
}
