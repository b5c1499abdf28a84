package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vit-train/vit-train/nn/blas"
)

// TestSmallAttentionHeadsRunInFloat32 checks, for each low-precision
// variant this CPU runs, the head sizes from which each of attention's
// passes takes the variant: heads of 64 one token short compute
// float32's values bit for bit, and heads of the first size do not. The
// forward pass compares outputs, the backward pass gradients from the
// same probabilities.
func TestSmallAttentionHeadsRunInFloat32(t *testing.T) {
	first := map[blas.Variant][2]int{blas.AMX: {64, 91}, blas.BF16: {128, 128}, blas.FP16: {128, 128}}
	for _, v := range blas.Variants()[1:] {
		if !v.Runs() {
			t.Logf("the %s product does not run here", v)
			continue
		}
		for pass, name := range []string{"forward", "backward"} {
			for _, n := range []int{first[v][pass] - 1, first[v][pass]} {
				low, full := attentionPass(v, n, pass == 0), attentionPass(blas.FP32, n, pass == 0)
				same := true
				for i := range low {
					same = same && math.Float32bits(low[i]) == math.Float32bits(full[i])
				}
				if small := n < first[v][pass]; same != small {
					t.Errorf("%s %s over %d tokens: float32's values bit for bit: %v, want %v", v, name, n, same, small)
				}
			}
		}
	}
}

// attentionPass runs attention's forward pass in v over one sample of n
// tokens and two heads of 64 and returns its output, or runs the forward
// pass in float32 and the backward in v and returns the gradient.
func attentionPass(v blas.Variant, n int, forward bool) []float32 {
	const d, heads = 128, 2
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	qkv, dout := make([]float32, n*3*d), make([]float32, n*d)
	for i := range qkv {
		qkv[i] = rng.Float32()*2 - 1
	}
	for i := range dout {
		dout[i] = rng.Float32()*2 - 1
	}
	out, probs := make([]float32, n*d), make([]float32, heads*n*probRowStride(n))
	fwd := blas.FP32
	if forward {
		fwd = v
	}
	attentionForward(fwd, qkv, out, probs, nil, nil, 0, 1, n, d, heads, nil)
	if forward {
		return out
	}
	dqkv, scratch := make([]float32, len(qkv)), make([]float32, len(probs))
	attentionBackward(v, qkv, dout, dqkv, probs, nil, scratch, nil, 0, 1, n, d, heads)
	return dqkv
}
