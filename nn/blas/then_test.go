//go:build !openblas

package blas

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// TestGemmAsThen checks that GemmAsThen gives GemmAs's product to then,
// once per element, and keeps what then writes: for every variant that
// runs (and float32 where the product is short), shapes with edge rows
// and columns, several K blocks and a bias.
func TestGemmAsThen(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	for _, v := range runningVariants(t, Variants()) {
		for _, sh := range []struct{ m, n, k int }{{1, 1, 1}, {37, 45, 70}, {100, 300, 64}, {65, 129, 2 * kcMax * 2}, {300, 200, 768}} {
			for _, tA := range []bool{false, true} {
				a, b := randFloats(rng, sh.m*sh.k), randFloats(rng, sh.k*sh.n)
				bias := randFloats(rng, sh.n)
				lda := sh.k
				if tA {
					lda = sh.m
				}
				want := make([]float32, sh.m*sh.n)
				GemmAs(v, tA, true, sh.m, sh.n, sh.k, 1, a, lda, b, sh.k, 0, want, sh.n, bias)
				got := make([]float32, sh.m*sh.n)
				seen := make([]float32, sh.m*sh.n)
				visits := make([]int, sh.m*sh.n)
				var mu sync.Mutex
				GemmAsThen(v, tA, true, sh.m, sh.n, sh.k, 1, a, lda, b, sh.k, 0, got, sh.n, bias, func(i0, i1, j0, j1 int) {
					mu.Lock()
					defer mu.Unlock()
					for i := i0; i < i1; i++ {
						for j := j0; j < j1; j++ {
							seen[i*sh.n+j] = got[i*sh.n+j]
							visits[i*sh.n+j]++
							got[i*sh.n+j] = 2 * got[i*sh.n+j]
						}
					}
				})
				for i := range want {
					if visits[i] != 1 {
						t.Fatalf("%s %v tA=%v: element %d visited %d times", v, sh, tA, i, visits[i])
					}
				}
				if !slices.Equal(seen, want) {
					t.Fatalf("%s %v tA=%v: then saw values other than GemmAs's", v, sh, tA)
				}
				for i := range want {
					if got[i] != 2*want[i] {
						t.Fatalf("%s %v tA=%v: C[%d] = %g, want then's %g", v, sh, tA, i, got[i], 2*want[i])
					}
				}
			}
		}
	}
}

// TestGemmPackedThen checks GemmPackedThen as TestGemmAsThen checks
// GemmAsThen, on B packed for every variant that runs.
func TestGemmPackedThen(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 8))
	for _, v := range Variants() {
		if !v.Runs() {
			continue
		}
		for _, sh := range []struct{ m, n, k int }{{1, 1, 1}, {37, 45, 70}, {65, 129, 3 * kcMax}, {300, 200, 768}} {
			a, b, bias := randFloats(rng, sh.m*sh.k), randFloats(rng, sh.k*sh.n), randFloats(rng, sh.n)
			packed := PackBAs(v, true, sh.k, sh.n, b, sh.k)
			want := make([]float32, sh.m*sh.n)
			GemmPacked(false, sh.m, 1, a, sh.k, packed, 0, want, sh.n, bias)
			got := make([]float32, sh.m*sh.n)
			visits := make([]int, sh.m*sh.n)
			var mu sync.Mutex
			GemmPackedThen(false, sh.m, 1, a, sh.k, packed, 0, got, sh.n, bias, func(i0, i1, j0, j1 int) {
				mu.Lock()
				defer mu.Unlock()
				for i := i0; i < i1; i++ {
					for j := j0; j < j1; j++ {
						if got[i*sh.n+j] != want[i*sh.n+j] {
							t.Errorf("%s %v: then saw C[%d, %d] = %g, want %g", v, sh, i, j, got[i*sh.n+j], want[i*sh.n+j])
						}
						visits[i*sh.n+j]++
						got[i*sh.n+j] = -got[i*sh.n+j]
					}
				}
			})
			for i := range want {
				if visits[i] != 1 || got[i] != -want[i] {
					t.Fatalf("%s %v: element %d visited %d times, %g, want %g", v, sh, i, visits[i], got[i], -want[i])
				}
			}
		}
	}
}
