//go:build !openblas

package blas

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// definedRowSums is RowSums's definition written out: for each row of
// op(A), runs of 32 steps added in order from zero, the runs' sums added
// in order from zero.
func definedRowSums(tA bool, m, k int, a []float32, lda int) []float32 {
	sums := make([]float32, m)
	for i := range m {
		for p0 := 0; p0 < k; p0 += 32 {
			var run float32
			for p := p0; p < min(p0+32, k); p++ {
				if tA {
					run += a[p*lda+i]
				} else {
					run += a[i*lda+p]
				}
			}
			sums[i] += run
		}
	}
	return sums
}

// checkSums compares sums (one past m, which must be left alone) with
// definedRowSums bit for bit.
func checkSums(t *testing.T, what string, got []float32, tA bool, m, k int, a []float32, lda int, past float32) {
	t.Helper()
	want := definedRowSums(tA, m, k, a, lda)
	for i := range m {
		if !sameBits(got[i], want[i]) {
			t.Fatalf("%s: sum %d = %v, defined as %v", what, i, got[i], want[i])
		}
	}
	if !sameBits(got[m], past) {
		t.Fatalf("%s: wrote %v past the %d sums", what, got[m], m)
	}
}

// TestRowSums checks RowSums against its definition bit for bit, for
// rows of op(A) = A and op(A) = Aᵀ of lengths around the 32-step runs
// and more rows than one pass down Aᵀ adds up.
func TestRowSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, m := range []int{1, 17, sumColumnsBlock + 6, 2*sumColumnsBlock + 50} {
		for _, k := range []int{0, 1, 31, 32, 33, 97} {
			for _, tA := range []bool{false, true} {
				lda := k + 3
				if tA {
					lda = m + 3
				}
				a := randomFloats(rng, max(m, k)*lda)
				got := randomFloats(rng, m+1)
				past := got[m]
				RowSums(tA, m, k, a, lda, got)
				checkSums(t, fmt.Sprintf("RowSums(tA %v, m %d, k %d)", tA, m, k), got, tA, m, k, a, lda, past)
			}
		}
	}
}

// TestGemmAsSums checks, in every variant that runs here, that
// GemmAsSums computes GemmAs's C bit for bit and RowSums's sums: taken
// by the amx kernel's conversion of op(A) = Aᵀ, or after the product,
// and for products of fewer K steps than the low-precision arithmetic
// takes, of no columns, and of alpha 0.
func TestGemmAsSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, v := range runningVariants(t, Variants()) {
		for _, s := range []struct {
			m, n, k int
			alpha   float32
		}{
			{200, 130, 300, 1}, {70, 50, 1601, 1}, {49, 49, 70, 0.5}, {768, 64, 420, 1},
			{3, 5, 10, 1}, {5, 0, 100, 1}, {4, 5, 90, 0},
		} {
			for _, tA := range []bool{false, true} {
				c := lowCase{tA, false, s.m, s.n, s.k, s.alpha, 0, true, 1}
				a, b, c0, bias := c.operands(rng)
				lda := s.k
				if tA {
					lda = s.m
				}
				want, got := slices.Clone(c0), slices.Clone(c0)
				GemmAs(v, tA, false, s.m, s.n, s.k, s.alpha, a, lda, b, max(1, s.n), 0, want, max(1, s.n), bias)
				sums := randomFloats(rng, s.m+1)
				past := sums[s.m]
				GemmAsSums(v, tA, false, s.m, s.n, s.k, s.alpha, a, lda, b, max(1, s.n), 0, got, max(1, s.n), bias, sums)
				what := fmt.Sprintf("%s %v", v, c)
				for i := range want {
					if !sameBits(got[i], want[i]) {
						t.Fatalf("%s: C[%d] = %v, GemmAs %v", what, i, got[i], want[i])
					}
				}
				checkSums(t, what, sums, tA, s.m, s.k, a, lda, past)
			}
		}
	}
}
