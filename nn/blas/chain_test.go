//go:build !openblas

package blas

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vit-train/vit-train/nn/parallel"
)

// chainCase is a GemmChainAs shape, with P written over S or apart.
type chainCase struct {
	m, n, k, e int
	inPlace    bool
}

// chainCases cover heads of ViT-B/16 (197 tokens of 64) and of the CIFAR
// preset (65), edge strips and columns, a K too short for low precision
// (16), and a second product whose K (300 tokens) takes several of
// GemmAs's K blocks.
var chainCases = []chainCase{
	{197, 197, 64, 64, true}, {197, 197, 64, 64, false}, {65, 65, 64, 64, true},
	{33, 70, 96, 40, false}, {50, 50, 16, 16, true}, {300, 300, 64, 64, false},
	{1, 64, 64, 32, true}, {64, 100, 128, 16, false},
}

// TestGemmChainAs checks GemmChainAs against its three steps, bit for
// bit in S, P and C, for every variant that runs, and that rows sees
// each row once: strip by strip, 32 rows at a time or fewer, where the
// AMX kernel runs and both K are long enough for low precision.
func TestGemmChainAs(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, v := range runningVariants(t, Variants()) {
		for _, c := range chainCases {
			t.Run(fmt.Sprintf("%s/%v", v, c), func(t *testing.T) { checkChain(t, v, c, rng) })
		}
	}
}

func checkChain(t *testing.T, v Variant, c chainCase, rng *rand.Rand) {
	m, n, k, e := c.m, c.n, c.k, c.e
	lda, lds, ldd, ldc, ldp := 3*k+5, n+3, 2*e+1, e+7, n+1
	a, b, d := randFloats(rng, m*lda), randFloats(rng, n*lda), randFloats(rng, n*ldd)
	const alpha = 0.125
	// The three steps, with P = 0.75·S + r in row r.
	wantS, wantC := randFloats(rng, m*lds), randFloats(rng, m*ldc)
	GemmAs(v, false, true, m, n, k, alpha, a, lda, b, lda, 0, wantS, lds, nil)
	wantP := make([]float32, m*ldp)
	for r := range m {
		for j := range n {
			wantP[r*ldp+j] = 0.75*wantS[r*lds+j] + float32(r)
		}
	}
	GemmAs(v, false, false, m, e, n, 1, wantP, ldp, d, ldd, 0, wantC, ldc, nil)

	// The chain, keeping the S and P it is given and makes.
	gotS, gotP, gotC := make([]float32, m*lds), make([]float32, m*ldp), randFloats(rng, m*ldc)
	seen := make([]int, m)
	calls, widest := 0, 0
	GemmChainAs(v, m, n, k, alpha, a, lda, b, lda, lds, func(r0, r1 int, s []float32) ([]float32, int) {
		calls, widest = calls+1, max(widest, r1-r0)
		for r := r0; r < r1; r++ {
			seen[r]++
			row := s[(r-r0)*lds : (r-r0)*lds+n]
			copy(gotS[r*lds:], row)
			for j, x := range row {
				gotP[r*ldp+j] = 0.75*x + float32(r)
				if c.inPlace {
					row[j] = gotP[r*ldp+j]
				}
			}
		}
		if c.inPlace {
			return s, lds
		}
		return gotP[r0*ldp:], ldp
	}, e, d, ldd, gotC, ldc)
	for r, s := range seen {
		if s != 1 {
			t.Fatalf("rows saw row %d %d times", r, s)
		}
	}
	sameBlock(t, "S", gotS, wantS, m, n, lds)
	sameBlock(t, "P", gotP, wantP, m, n, ldp)
	sameBlock(t, "C", gotC, wantC, m, e, ldc)
	checkStripCalls(t, "rows", v, min(k, n), m, calls, widest)
}

// sameBlock fails t unless got and want (rows × cols, ld apart) hold
// the same bits.
func sameBlock(t *testing.T, name string, got, want []float32, rows, cols, ld int) {
	t.Helper()
	for r := range rows {
		for j := range cols {
			if g, w := got[r*ld+j], want[r*ld+j]; !sameBits(g, w) {
				t.Fatalf("%s[%d, %d] = %g, want %g", name, r, j, g, w)
			}
		}
	}
}

// checkStripCalls checks how a chain called its function of m rows: strip
// by strip, at most the kernel's mr rows a call, where v's kernel computes
// strips and the chain's shortest K (shortestK) is long enough for low
// precision, else once over all rows.
func checkStripCalls(t *testing.T, fn string, v Variant, shortestK, m, calls, widest int) {
	t.Helper()
	kern := lowKernel(v)
	inStrips := kern != nil && kern.strip != nil && shortestK >= lowPrecisionMinK
	if inStrips && (widest > kern.mr || calls != ceilDiv(m, kern.mr)) {
		t.Fatalf("%s called %d times, at most %d rows at once: not strip by strip", fn, calls, widest)
	}
	if !inStrips && calls != 1 {
		t.Fatalf("%s called %d times, want once over all rows", fn, calls)
	}
}

// TestGemmChainAsAllocs checks that a chain, its function of rows
// included, allocates nothing once its buffers are pooled, also when
// products of other sizes take turns with it.
func TestGemmChainAsAllocs(t *testing.T) {
	const m, n, k = 197, 197, 64
	rng := rand.New(rand.NewPCG(1, 2))
	a, c := randFloats(rng, m*k), make([]float32, m*k)
	const bm, bn, bk = 300, 400, 800
	x, w, y := randFloats(rng, bm*bk), randFloats(rng, bn*bk), make([]float32, bm*bn)
	for _, v := range Variants() {
		if !v.Runs() {
			continue
		}
		chain := func(lo, hi int) {
			for range hi - lo {
				GemmChainAs(v, m, n, k, 1, a, k, a, k, n, func(r0, r1 int, s []float32) ([]float32, int) {
					return s, n
				}, k, a, k, c, k)
			}
		}
		both := func() {
			parallel.For(4, 1, chain)
			GemmAs(v, false, true, bm, bn, bk, 1, x, bk, w, bk, 0, y, bn, nil)
			GemmAs(v, true, false, bn, bm/2, bk, 1, w, bn, x, bm/2, 0, y, bm/2, nil)
		}
		if allocs := testing.AllocsPerRun(10, both); allocs > 0 {
			t.Errorf("%s: %v allocations a chain and a product", v, allocs)
		}
	}
}
