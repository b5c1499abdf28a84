package blas

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemmPackedPlain checks GemmPacked where B is kept as a plain
// matrix, float64 in every build (and float32 in the OpenBLAS build):
// bit for bit Gemm's and GemmBias's on the matrix it was packed from.
func TestGemmPackedPlain(t *testing.T) {
	testGemmPackedPlain[float64](t)
	if Backend() == "openblas" {
		testGemmPackedPlain[float32](t)
	}
}

func testGemmPackedPlain[T float32 | float64](t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 29))
	fill := func(n int) []T {
		s := make([]T, n)
		for i := range s {
			s[i] = T(rng.Float64()*2 - 1)
		}
		return s
	}
	for _, sh := range [][3]int{{1, 1, 1}, {17, 23, 9}, {130, 97, 200}, {5, 40, 0}} {
		m, n, k := sh[0], sh[1], sh[2]
		for tr := range 4 {
			tA, tB := tr&1 != 0, tr&2 != 0
			lda, ldb := k+1, n+2
			if tA {
				lda = m + 1
			}
			if tB {
				ldb = k + 2
			}
			a, b, bias := fill(max(m, k)*lda), fill(max(k, n)*ldb), fill(n)
			p := PackB(tB, k, n, b, ldb)
			for _, row := range [][]T{nil, bias} {
				c0 := fill(m * n)
				want := append([]T(nil), c0...)
				got := append([]T(nil), c0...)
				if row == nil {
					Gemm(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 0.25, want, n)
				} else {
					GemmBias(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 0.25, want, n, row)
				}
				GemmPacked(tA, m, 0.5, a, lda, p, 0.25, got, n, row)
				for i := range got {
					if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) {
						t.Fatalf("%T m=%d n=%d k=%d tA=%v tB=%v bias=%v: C[%d] = %v, want %v", got[i], m, n, k, tA, tB, row != nil, i, got[i], want[i])
					}
				}
			}
		}
	}
}
