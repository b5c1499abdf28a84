package optim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdamWKernelMatchesScalar checks adamwKernel bit for bit against the
// update written out one rounded float32 operation at a time, over lengths
// that cover every vector tail.
func TestAdamWKernelMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	k := adamConst{b1: 0.9, ob1: float32(1 - 0.9), b2: 0.999, ob2: float32(1 - 0.999), eps: 1e-8, invSqrtBC2: float32(1 / math.Sqrt(1-math.Pow(0.999, 7))), gradScale: 1}
	c := adamCoef{decayMul: float32(1 - 3e-3*0.05), stepSize: float32(3e-3 / (1 - math.Pow(0.9, 7)))}
	for n := 0; n <= 100; n++ {
		p, g, m, v := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range p {
			p[i], g[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64()*1e-2)
			m[i], v[i] = float32(rng.NormFloat64()*1e-3), float32(rng.Float64()*1e-4)
		}
		wp, wm, wv := append([]float32(nil), p...), append([]float32(nil), m...), append([]float32(nil), v...)
		for i := range wp {
			mi := float32(k.b1*wm[i]) + float32(k.ob1*g[i])
			vi := float32(k.b2*wv[i]) + float32(float32(k.ob2*g[i])*g[i])
			wm[i], wv[i] = mi, vi
			denom := float32(float32(math.Sqrt(float64(vi)))*k.invSqrtBC2) + k.eps
			wp[i] = float32(wp[i]*c.decayMul) - float32(c.stepSize*mi)/denom
		}
		adamwKernel(p, g, m, v, c, k)
		for i := range p {
			if p[i] != wp[i] || m[i] != wm[i] || v[i] != wv[i] {
				t.Fatalf("n=%d [%d]: p, m, v = %g, %g, %g, want %g, %g, %g", n, i, p[i], m[i], v[i], wp[i], wm[i], wv[i])
			}
		}
	}
}
