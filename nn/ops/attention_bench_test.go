package ops

import (
	"testing"

	"github.com/vit-train/vit-train/nn/blas"
)

// BenchmarkAttention times attention's forward and backward passes as a
// training graph runs them, keeping P for the backward pass where it is
// below recomputedProbsBytes (every shape here) and otherwise computing
// it again, over the heads of vit_fmnist_patch4_28 (batch 128: 50
// tokens, heads of 16) and vit_cifar_patch4_32 (batch 64: 65 tokens, heads of 64) in float32,
// and those of vit_cifar_patch4_32 and ViT-B/16 (batch 4: 197 tokens,
// heads of 64) in each low-precision variant this processor runs (each
// pass of a head too small for it runs in float32: see
// minLowPrecisionHead).
func BenchmarkAttention(b *testing.B) {
	type shape struct {
		name               string
		batch, n, d, heads int
		v                  blas.Variant
	}
	shapes := []shape{{"fmnist", 128, 50, 64, 4, blas.FP32}, {"cifar", 64, 65, 192, 3, blas.FP32}}
	for _, v := range blas.Variants()[1:] {
		if v.Runs() {
			shapes = append(shapes, shape{"cifar/" + string(v), 64, 65, 192, 3, v}, shape{"vitb/" + string(v), 4, 197, 768, 12, v})
		}
	}
	for _, s := range shapes {
		qkv, dout := make([]float32, s.batch*s.n*3*s.d), make([]float32, s.batch*s.n*s.d)
		for i := range qkv {
			qkv[i] = float32(i%13)*0.05 - 0.3
		}
		for i := range dout {
			dout[i] = float32(i%7)*0.01 - 0.03
		}
		out, dqkv := make([]float32, len(dout)), make([]float32, len(qkv))
		var probs []float32
		if size := s.batch * s.heads * s.n * probRowStride(s.n); keepsProbs(4 * size) {
			probs = make([]float32, size)
		}
		scratch := make([]float32, attentionGradScratch(s.batch*s.heads, s.n, s.n, probs == nil, 0))
		forward := func() {
			attentionForward(s.v, qkv, out, probs, nil, 0, s.batch, s.n, s.n, s.d, s.heads, nil)
		}
		backward := func() {
			attentionBackward(s.v, qkv, dout, dqkv, probs, scratch, nil, 0, s.batch, s.n, s.n, s.n, s.d, s.heads)
		}
		for _, pass := range []struct {
			name string
			run  func()
		}{{"forward", forward}, {"backward", backward}} {
			b.Run(s.name+"/"+pass.name, func(b *testing.B) {
				forward()
				for b.Loop() {
					pass.run()
				}
				b.ReportMetric(float64(s.batch)*float64(b.N)/b.Elapsed().Seconds(), "images/s")
			})
		}
	}
}
