package optim

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkAdamW8M is one AdamW step over an 8M-value parameter set (a
// (2048, 4096) matrix and a bias), in GB/s of memory traffic and values per ns.
func BenchmarkAdamW8M(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	params := []Param{newParam(rng, "w", 2048, 4096), newParam(rng, "b", 4096)}
	o, err := NewAdamW(params, nil, DefaultAdamWConfig())
	if err != nil {
		b.Fatal(err)
	}
	grads := randomGrads(rng, params, 1)
	n := numValues(params)
	b.SetBytes(int64(bytesPerAdamWValue * n))
	for b.Loop() {
		if err := o.Step(1e-3, grads); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(bytesPerAdamWValue*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	b.ReportMetric(float64(n)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "values/ns")
}
