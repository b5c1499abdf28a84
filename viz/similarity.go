package viz

import (
	"fmt"
	"math"
)

// CosineSimilarity returns the (R, R) cosine similarities between the rows
// of a row-major (R, D) matrix. A zero row has similarity 0 with every row,
// itself included.
func CosineSimilarity(rows []float32, r, d int) ([]float64, error) {
	if r < 1 || d < 1 || len(rows) != r*d {
		return nil, fmt.Errorf("viz: cosine similarity of %d values as (%d, %d)", len(rows), r, d)
	}
	inv := make([]float64, r)
	for i := range inv {
		var ss float64
		for _, v := range rows[i*d : (i+1)*d] {
			ss += float64(v) * float64(v)
		}
		if ss > 0 {
			inv[i] = 1 / math.Sqrt(ss)
		}
	}
	out := make([]float64, r*r)
	for i := 0; i < r; i++ {
		a := rows[i*d : (i+1)*d]
		for j := i; j < r; j++ {
			b := rows[j*d : (j+1)*d]
			var dot float64
			for k, v := range a {
				dot += float64(v) * float64(b[k])
			}
			s := dot * inv[i] * inv[j]
			out[i*r+j], out[j*r+i] = s, s
		}
	}
	return out, nil
}

// PosEmbedSimilarity returns the (P, P) cosine similarities between the
// position embeddings of the P = tokens−prefix patches, from a model's
// pos_embed (1, tokens, dim); the first prefix rows ([CLS] and the
// distillation token) are left out.
func PosEmbedSimilarity(posEmbed []float32, tokens, dim, prefix int) ([]float64, error) {
	if len(posEmbed) != tokens*dim {
		return nil, fmt.Errorf("viz: pos_embed has %d values, want tokens*dim = %d*%d", len(posEmbed), tokens, dim)
	}
	if prefix < 0 || prefix >= tokens {
		return nil, fmt.Errorf("viz: %d prefix tokens of %d", prefix, tokens)
	}
	return CosineSimilarity(posEmbed[prefix*dim:], tokens-prefix, dim)
}
