package optim

import (
	"math/rand/v2"
	"testing"
)

// bytesPerAdamWValue is the memory traffic of one AdamW update: read p, g,
// m, v and write p, m, v (4 bytes each).
const bytesPerAdamWValue = 28

// BenchmarkAdamWViTB measures one AdamW step over the 86.6M parameters of
// ViT-B/16 and reports the memory throughput in GB/s. The gradients are
// written, as a backward pass writes them, and the steps before the
// timed ones fault in the moments' pages: an untouched buffer would read
// the kernel's zero page, and a first step time its page faults.
func BenchmarkAdamWViTB(b *testing.B) {
	params := vitBParams()
	o, err := NewAdamW(params, WeightDecayGroups(params, 0.05, vitNoDecayNames), DefaultAdamWConfig())
	if err != nil {
		b.Fatal(err)
	}
	grads := randomGrads(rand.New(rand.NewPCG(1, 2)), params, 1)
	n := numValues(params)
	b.SetBytes(int64(bytesPerAdamWValue * n))
	for range 2 {
		if err := o.Step(1e-3, grads); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if err := o.Step(1e-3, grads); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(bytesPerAdamWValue*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	b.ReportMetric(float64(n)/1e6, "Mparams")
}

// BenchmarkClipViTB measures the global gradient norm (with clipping) over
// ViT-B/16's gradients.
func BenchmarkClipViTB(b *testing.B) {
	params := vitBParams()
	c, err := NewClipper(params)
	if err != nil {
		b.Fatal(err)
	}
	grads := randomZeroGrads(params)
	for _, g := range grads {
		for i := range g {
			g[i] = 1
		}
	}
	n := numValues(params)
	b.SetBytes(int64(4 * n))
	for b.Loop() {
		if _, err := c.Clip(grads, 1e9); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(4*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkEMAViTB measures one EMA update over ViT-B/16's weights.
func BenchmarkEMAViTB(b *testing.B) {
	params := vitBParams()
	e, err := NewEMA(params, DefaultEMADecay)
	if err != nil {
		b.Fatal(err)
	}
	n := numValues(params)
	b.SetBytes(int64(12 * n))
	for b.Loop() {
		e.Update()
	}
	b.ReportMetric(float64(12*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkClipStepViTB times the clipped AdamW update of ViT-B/16 two
// ways: Clip (the norm, then scaling the gradients in place) and Step, as
// train's step once did, and NormScale and StepScaled, which reads the
// clipping factor with the gradients. The limit shrinks by 1% a step, so
// that every step clips.
func BenchmarkClipStepViTB(b *testing.B) {
	params := vitBParams()
	grads := randomGrads(rand.New(rand.NewPCG(1, 2)), params, 1)
	for _, fused := range []bool{false, true} {
		name := "Clip+Step"
		if fused {
			name = "NormScale+StepScaled"
		}
		b.Run(name, func(b *testing.B) {
			o, err := NewAdamW(params, WeightDecayGroups(params, 0.05, vitNoDecayNames), DefaultAdamWConfig())
			if err != nil {
				b.Fatal(err)
			}
			c, err := NewClipper(params)
			if err != nil {
				b.Fatal(err)
			}
			limit, err := c.Norm(grads)
			if err != nil {
				b.Fatal(err)
			}
			step := func() {
				limit *= 0.99
				if fused {
					_, scale, err := c.NormScale(grads, limit)
					if err == nil {
						err = o.StepScaled(1e-3, scale, grads)
					}
					if err != nil {
						b.Fatal(err)
					}
					return
				}
				_, err := c.Clip(grads, limit)
				if err == nil {
					err = o.Step(1e-3, grads)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			for range 2 { // fault in the moments
				step()
			}
			for b.Loop() {
				step()
			}
			b.ReportMetric(float64(numValues(params))*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "values/ns")
		})
	}
}
