//go:build !openblas

package blas

import (
	"math"
	"math/rand/v2"
	"testing"
)

// FuzzSgemm compares every kernel the CPU runs with gonum's Sgemm on
// fuzzed shapes (up to 160×160×200, sometimes large enough to be split
// over the workers), transposes, strides, alpha and beta, with NaN in C
// when beta is 0 and guard values around C that must stay; bit 2 of tr
// goes through GemmBias, with NaN past the end of the bias row, and bit 3
// through PackB and GemmPacked.
func FuzzSgemm(f *testing.F) {
	f.Add(uint8(1), uint8(1), uint8(1), uint8(0), uint8(0), uint8(0), uint8(0), float32(1), float32(0), uint64(1))
	f.Add(uint8(65), uint8(65), uint8(64), uint8(2), uint8(3), uint8(1), uint8(1), float32(0.125), float32(0), uint64(2))
	f.Add(uint8(130), uint8(97), uint8(200), uint8(1), uint8(0), uint8(7), uint8(2), float32(-2), float32(0.25), uint64(3))
	f.Add(uint8(13), uint8(160), uint8(33), uint8(3), uint8(5), uint8(0), uint8(3), float32(0.5), float32(1), uint64(4))
	f.Add(uint8(77), uint8(45), uint8(130), uint8(6), uint8(1), uint8(2), uint8(0), float32(1), float32(0), uint64(5))
	f.Add(uint8(150), uint8(140), uint8(199), uint8(14), uint8(2), uint8(3), uint8(1), float32(-0.5), float32(0.25), uint64(6))
	f.Fuzz(func(t *testing.T, m8, n8, k8, tr, padA, padB, padC uint8, alpha, beta float32, seed uint64) {
		m, n, k := 1+int(m8)%160, 1+int(n8)%160, int(k8)%201
		tA, tB, withBias, packed := tr&1 != 0, tr&2 != 0, tr&4 != 0, tr&8 != 0
		if !finite(alpha) || !finite(beta) || math.Abs(float64(alpha)) > 1e3 || math.Abs(float64(beta)) > 1e3 {
			t.Skip()
		}
		ks := cpuKernels()
		if len(ks) == 0 {
			t.Skip("no assembly kernel")
		}
		rng := rand.New(rand.NewPCG(seed, 99))
		ra, ca := storedShape(tA, m, k)
		rb, cb := storedShape(tB, k, n)
		a := newOperand(rng, ra, ca, int(padA%8), float32(math.NaN()))
		b := newOperand(rng, rb, cb, int(padB%8), float32(math.NaN()))
		c0 := newOperand(rng, m, n, int(padC%8), guard)
		if beta == 0 {
			for i := range m {
				for j := range n {
					c0.data[i*c0.ld+j] = float32(math.NaN())
				}
			}
		}
		bias := newOperand(rng, 1, n, 1, float32(math.NaN()))
		want := append([]float32(nil), c0.data...)
		impl.Sgemm(trans(tA), trans(tB), m, n, k, alpha, a.data, a.ld, b.data, b.ld, beta, want, c0.ld)
		if withBias {
			for i := range m {
				for j := range n {
					want[i*c0.ld+j] += bias.data[j]
				}
			}
		}
		for _, kern := range ks {
			useKernel(t, kern)
			got := append([]float32(nil), c0.data...)
			var row []float32
			if withBias {
				row = bias.data[:n]
			}
			switch {
			case packed:
				GemmPacked(tA, m, alpha, a.data, a.ld, PackB(tB, k, n, b.data, b.ld), beta, got, c0.ld, row)
			case withBias:
				GemmBias(tA, tB, m, n, k, alpha, a.data, a.ld, b.data, b.ld, beta, got, c0.ld, row)
			default:
				Gemm(tA, tB, m, n, k, alpha, a.data, a.ld, b.data, b.ld, beta, got, c0.ld)
			}
			for idx := range got {
				if !c0.inside(idx) {
					if got[idx] != guard {
						t.Fatalf("%s: m=%d n=%d k=%d tA=%v tB=%v: C[%d] outside the matrix changed", kern.name, m, n, k, tA, tB, idx)
					}
					continue
				}
				// gonum sums in another order: allow k+2 roundings of the
				// terms' magnitude (inputs are in [-1, 1]).
				mag := math.Abs(float64(alpha)) * float64(k)
				if beta != 0 {
					mag += math.Abs(float64(beta) * float64(c0.data[idx]))
				}
				if withBias {
					mag += 1 // |bias| ≤ 1
				}
				bound := float64(k+2) * 2 * (1.0 / (1 << 23)) * mag
				if d := math.Abs(float64(got[idx]) - float64(want[idx])); !(d <= bound+1e-30) {
					t.Fatalf("%s: m=%d n=%d k=%d tA=%v tB=%v alpha=%v beta=%v bias=%v: C[%d] = %v, gonum %v", kern.name, m, n, k, tA, tB, alpha, beta, withBias, idx, got[idx], want[idx])
				}
			}
		}
	})
}

func finite(x float32) bool { return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) }
