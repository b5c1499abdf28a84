package viz_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vit-train/vit-train/viz"
)

func TestCosineSimilarity(t *testing.T) {
	rows := []float32{
		1, 0, // a
		1, 1, // b: 45° from a
		-2, 0, // c: opposite a
		0, 0, // zero row
	}
	s, err := viz.CosineSimilarity(rows, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := [4][4]float64{
		{1, 1 / math.Sqrt2, -1, 0},
		{1 / math.Sqrt2, 1, -1 / math.Sqrt2, 0},
		{-1, -1 / math.Sqrt2, 1, 0},
		{0, 0, 0, 0},
	}
	for i := range want {
		for j := range want[i] {
			if !near(s[i*4+j], want[i][j], 1e-12) {
				t.Errorf("sim[%d][%d] = %g, want %g", i, j, s[i*4+j], want[i][j])
			}
		}
	}
}

func TestPosEmbedSimilarity(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const tokens, dim, prefix = 2 + 9, 6, 2
	pos := make([]float32, tokens*dim)
	for i := range pos {
		pos[i] = float32(rng.NormFloat64())
	}
	s, err := viz.PosEmbedSimilarity(pos, tokens, dim, prefix)
	if err != nil {
		t.Fatal(err)
	}
	const p = tokens - prefix
	if len(s) != p*p {
		t.Fatalf("%d values, want %d", len(s), p*p)
	}
	for i := 0; i < p; i++ {
		if !near(s[i*p+i], 1, 1e-12) {
			t.Errorf("patch %d's similarity with itself is %.15g", i, s[i*p+i])
		}
		for j := 0; j < p; j++ {
			if s[i*p+j] != s[j*p+i] {
				t.Errorf("sim[%d][%d] = %g but sim[%d][%d] = %g", i, j, s[i*p+j], j, i, s[j*p+i])
			}
			// Independent formula on the patch rows (prefix rows skipped).
			a, b := pos[(prefix+i)*dim:(prefix+i+1)*dim], pos[(prefix+j)*dim:(prefix+j+1)*dim]
			var dot, na, nb float64
			for k := range a {
				dot += float64(a[k]) * float64(b[k])
				na += float64(a[k]) * float64(a[k])
				nb += float64(b[k]) * float64(b[k])
			}
			if want := dot / math.Sqrt(na*nb); !near(s[i*p+j], want, 1e-12) {
				t.Errorf("sim[%d][%d] = %g, want %g", i, j, s[i*p+j], want)
			}
		}
	}
	if _, err := viz.PosEmbedSimilarity(pos[:len(pos)-1], tokens, dim, prefix); err == nil {
		t.Error("PosEmbedSimilarity accepted a short pos_embed")
	}
	if _, err := viz.PosEmbedSimilarity(pos, tokens, dim, tokens); err == nil {
		t.Error("PosEmbedSimilarity accepted no patch rows")
	}
}
