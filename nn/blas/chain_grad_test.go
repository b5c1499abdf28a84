//go:build !openblas

package blas

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// chainGradCases cover heads of ViT-B/16 (197 tokens of 64) and of the
// CIFAR preset (65), edge strips of rows and of columns, the gradient of
// a prefix of 64 queries over 197 tokens, a K too short for low
// precision (16), an M of 300, whose transposed products take several
// of GemmAs's K blocks, and no rows or no tokens (gradients of zeros).
var chainGradCases = [][4]int{ // M, N, K, E
	{197, 197, 64, 64}, {65, 65, 64, 64}, {64, 197, 64, 64}, {70, 100, 96, 80},
	{50, 50, 16, 16}, {300, 300, 64, 64}, {1, 64, 64, 64}, {0, 70, 64, 64}, {70, 0, 64, 64},
}

// TestGemmChainGradAs checks GemmChainGradAs against its five steps, bit
// for bit in dS, dA, dB and dD, for every variant that runs, and that
// grad sees each row once: strip by strip, 32 rows at a time or fewer,
// where the AMX kernel runs and every K is long enough for low precision.
func TestGemmChainGradAs(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, v := range runningVariants(t, Variants()) {
		for _, c := range chainGradCases {
			t.Run(fmt.Sprintf("%s/%v", v, c), func(t *testing.T) { checkChainGrad(t, v, c, rng) })
		}
	}
}

func checkChainGrad(t *testing.T, v Variant, c [4]int, rng *rand.Rand) {
	m, n, k, e := c[0], c[1], c[2], c[3]
	operands := func() *ChainGrad[float32] {
		g := &ChainGrad[float32]{M: m, N: n, K: k, E: e, Alpha: 0.125,
			LDA: 3*k + 5, LDB: 2*k + 1, LDP: n + 3, LDD: e + 7, LDDC: e + 2, LDS: n + 1, LDDA: k + 3, LDDB: k + 9, LDDD: e + 5}
		g.A, g.B, g.P = randFloats(rng, m*g.LDA), randFloats(rng, n*g.LDB), randFloats(rng, m*g.LDP)
		g.D, g.DC = randFloats(rng, n*g.LDD), randFloats(rng, m*g.LDDC)
		g.DS, g.DA, g.DB, g.DD = randFloats(rng, m*g.LDS), randFloats(rng, m*g.LDDA), randFloats(rng, n*g.LDDB), randFloats(rng, n*g.LDDD)
		return g
	}
	// dS = 0.75·dP + r in row r.
	rowGrad := func(ds []float32, r int) {
		for j := range n {
			ds[j] = 0.75*ds[j] + float32(r)
		}
	}
	want := operands()
	GemmAs(v, false, true, m, n, e, 1, want.DC, want.LDDC, want.D, want.LDD, 0, want.DS, want.LDS, nil)
	for r := range m {
		rowGrad(want.DS[r*want.LDS:], r)
	}
	GemmAs(v, false, false, m, k, n, want.Alpha, want.DS, want.LDS, want.B, want.LDB, 0, want.DA, want.LDDA, nil)
	GemmAs(v, true, false, n, k, m, want.Alpha, want.DS, want.LDS, want.A, want.LDA, 0, want.DB, want.LDDB, nil)
	GemmAs(v, true, false, n, e, m, 1, want.P, want.LDP, want.DC, want.LDDC, 0, want.DD, want.LDDD, nil)

	got := operands()
	copy(got.A, want.A)
	copy(got.B, want.B)
	copy(got.P, want.P)
	copy(got.D, want.D)
	copy(got.DC, want.DC)
	seen := make([]int, m)
	calls, widest := 0, 0
	GemmChainGradAs(v, got, func(r0, r1 int, ds []float32) {
		calls, widest = calls+1, max(widest, r1-r0)
		for r := r0; r < r1; r++ {
			seen[r]++
			rowGrad(ds[(r-r0)*got.LDS:], r)
		}
	})
	for r, s := range seen {
		if s != 1 {
			t.Fatalf("grad saw row %d %d times", r, s)
		}
	}
	sameBlock(t, "dS", got.DS, want.DS, m, n, got.LDS)
	sameBlock(t, "dA", got.DA, want.DA, m, k, got.LDDA)
	sameBlock(t, "dB", got.DB, want.DB, n, k, got.LDDB)
	sameBlock(t, "dD", got.DD, want.DD, n, e, got.LDDD)
	checkStripCalls(t, "grad", v, min(m, n, e), m, calls, widest)
}

// TestGemmChainGradAsAllocs checks that a chain's gradient, its function
// of rows included, allocates nothing once its buffers are pooled.
func TestGemmChainGradAsAllocs(t *testing.T) {
	const m, n, k = 197, 197, 64
	rng := rand.New(rand.NewPCG(3, 4))
	x, s := randFloats(rng, m*k), make([]float32, m*n)
	grads := make([]float32, 3*m*k)
	for _, v := range Variants() {
		if !v.Runs() {
			continue
		}
		chainGrad := func() {
			g := ChainGrad[float32]{M: m, N: n, K: k, E: k, Alpha: 0.125, A: x, LDA: k, B: x, LDB: k, P: s, LDP: n, D: x, LDD: k,
				DC: x, LDDC: k, DS: s, LDS: n, DA: grads, LDDA: k, DB: grads[m*k:], LDDB: k, DD: grads[2*m*k:], LDDD: k}
			GemmChainGradAs(v, &g, func(r0, r1 int, ds []float32) { clear(ds[:(r1-r0-1)*n+n]) })
		}
		chainGrad()
		if allocs := testing.AllocsPerRun(10, chainGrad); allocs > 0 {
			t.Errorf("%s: %v allocations a chain's gradient", v, allocs)
		}
	}
}
