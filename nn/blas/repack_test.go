package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRepackRows changes rows of B, or of Bᵀ, repacks them (PackedB.
// RepackRows) in pieces of its RowAlign, the last row's piece short, and
// checks that products with the repacked B are those with B packed anew,
// bit for bit, for float64 (a plain copy), float32 and every low-precision
// variant this processor runs; and that a piece that does not start on
// RowAlign is refused.
func TestRepackRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 14))
	variants := []Variant{FP32}
	for _, v := range Variants()[1:] {
		if v.Runs() {
			variants = append(variants, v)
		}
	}
	const m = 33
	for _, v := range variants {
		for _, tB := range []bool{false, true} {
			// K spans several K blocks, with an odd last step; n leaves
			// a partial panel.
			for _, kn := range [][2]int{{301, 70}, {900, 45}} {
				k, n := kn[0], kn[1]
				t.Run(fmt.Sprintf("%s/transB=%v/k=%d/n=%d", v, tB, k, n), func(t *testing.T) {
					rows, cols := storedShape(tB, k, n)
					ldb := cols + 3
					b := make([]float32, rows*ldb)
					for i := range b {
						b[i] = float32(rng.NormFloat64())
					}
					p := PackBAs(v, tB, k, n, b, ldb)
					align := p.RowAlign()
					if a := RepackAlign(v, tB, k); a != align {
						t.Fatalf("RepackAlign %d, RowAlign %d", a, align)
					}
					// Change every other piece of rows, and the last.
					for r0 := 0; r0 < rows; r0 += align {
						r1 := min(r0+align, rows)
						if (r0/align)%2 == 1 && r1 != rows {
							continue
						}
						for i := r0; i < r1; i++ {
							for j := range cols {
								b[i*ldb+j] = float32(rng.NormFloat64())
							}
						}
						p.RepackRows(b, ldb, r0, r1)
					}
					checkSameProducts(t, rng, m, p, PackBAs(v, tB, k, n, b, ldb))
					if align > 1 {
						func() {
							defer func() {
								if e := recover(); e == nil || !strings.Contains(fmt.Sprint(e), "RepackRows") {
									t.Errorf("rows [1, %d) repacked, want a panic naming RepackRows; got %v", align+1, e)
								}
							}()
							p.RepackRows(b, ldb, 1, align+1)
						}()
					}
				})
			}
		}
	}
	t.Run("float64", func(t *testing.T) {
		b := make([]float64, 20*7)
		p := PackB(true, 7, 20, b, 7)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		p.RepackRows(b, 7, 0, 20)
		a, c1, c2 := make([]float64, 3*7), make([]float64, 3*20), make([]float64, 3*20)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		GemmPacked(false, 3, 1, a, 7, p, 0, c1, 20, nil)
		Gemm(false, true, 3, 20, 7, 1, a, 7, b, 7, 0, c2, 20)
		for i := range c1 {
			if c1[i] != c2[i] {
				t.Fatalf("C[%d] = %v from the repacked B, %v from B", i, c1[i], c2[i])
			}
		}
	})
}

// checkSameProducts checks that GemmPacked gives the same C, bit for bit,
// with got and want for a random A of m rows.
func checkSameProducts(t *testing.T, rng *rand.Rand, m int, got, want *PackedB[float32]) {
	t.Helper()
	a := make([]float32, m*got.k)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
	}
	c1, c2 := make([]float32, m*got.n), make([]float32, m*got.n)
	GemmPacked(false, m, 1, a, got.k, got, 0, c1, got.n, nil)
	GemmPacked(false, m, 1, a, want.k, want, 0, c2, want.n, nil)
	for i := range c1 {
		if math.Float32bits(c1[i]) != math.Float32bits(c2[i]) {
			t.Fatalf("C[%d, %d] = %v from the repacked B, %v from B packed anew", i/got.n, i%got.n, c1[i], c2[i])
		}
	}
}
