package blas

import (
	"math"
	"math/rand/v2"
	"testing"
)

// naive computes C = alpha·op(A)·op(B) + beta·C with loops.
func naive(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for p := 0; p < k; p++ {
				ai, bi := i*lda+p, p*ldb+j
				if tA {
					ai = p*lda + i
				}
				if tB {
					bi = j*ldb + p
				}
				av, bv := a[ai], b[bi]
				s += av * bv
			}
			c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
		}
	}
}

// TestGemmMatchesNaive checks Gemm and GemmBias, float32 and float64, on
// strided operands and every transpose pair.
func TestGemmMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	// The large case crosses parallelWork, so backends that split rows do.
	for _, size := range [][3]int{{3, 4, 5}, {130, 70, 120}} {
		m, n, k := size[0], size[1], size[2]
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				// Strided operands: leading dimensions larger than the rows.
				lda, ldb, ldc := k+3, n+2, n+1
				ra, rb := m, k
				if tA {
					lda, ra = m+3, k
				}
				if tB {
					ldb, rb = k+2, n
				}
				a := make([]float64, ra*lda)
				b := make([]float64, rb*ldb)
				c := make([]float64, m*ldc)
				for _, s := range [][]float64{a, b, c} {
					for i := range s {
						s[i] = rng.Float64()*2 - 1
					}
				}
				bias := make([]float64, n)
				for i := range bias {
					bias[i] = rng.Float64()*2 - 1
				}
				want := append([]float64(nil), c...)
				naive(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 2, want, ldc)
				for _, withBias := range []bool{false, true} {
					if withBias {
						for i := range m {
							for j := range n {
								want[i*ldc+j] += bias[j]
							}
						}
					}
					got64 := append([]float64(nil), c...)
					a32, b32, c32 := to32(a), to32(b), to32(c)
					if withBias {
						GemmBias(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 2, got64, ldc, bias)
						GemmBias(tA, tB, m, n, k, float32(0.5), a32, lda, b32, ldb, 2, c32, ldc, to32(bias))
					} else {
						Gemm(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 2, got64, ldc)
						Gemm(tA, tB, m, n, k, float32(0.5), a32, lda, b32, ldb, 2, c32, ldc)
					}
					for i := range want {
						if math.Abs(got64[i]-want[i]) > 1e-10 {
							t.Fatalf("%v float64 tA=%v tB=%v bias=%v: c[%d] = %v, want %v", size, tA, tB, withBias, i, got64[i], want[i])
						}
						if math.Abs(float64(c32[i])-want[i]) > 1e-3 {
							t.Fatalf("%v float32 tA=%v tB=%v bias=%v: c[%d] = %v, want %v", size, tA, tB, withBias, i, c32[i], want[i])
						}
					}
				}
			}
		}
	}
}

func to32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

// BenchmarkSgemm reports GFLOP/s of a (4160×192)·(192×768) product, the
// MLP's first layer of the CIFAR benchmark model at batch 64.
func BenchmarkSgemm(b *testing.B) {
	const m, n, k = 4160, 768, 192
	a, w, c := make([]float32, m*k), make([]float32, n*k), make([]float32, m*n)
	for i := range a {
		a[i] = float32(i%7) * 0.1
	}
	for i := range w {
		w[i] = float32(i%5) * 0.1
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Gemm(false, true, m, n, k, 1, a, k, w, k, 0, c, n)
	}
	b.ReportMetric(2*m*n*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
