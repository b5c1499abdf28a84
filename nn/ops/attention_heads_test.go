package ops

import (
	"math"
	"math/rand/v2"
	"runtime"
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
	first := map[blas.Variant][2]int{blas.AMX: {64, 64}, blas.BF16: {128, 128}, blas.FP16: {128, 128}}
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
	attentionForward(fwd, qkv, out, probs, nil, 0, 1, n, n, d, heads, nil)
	if forward {
		return out
	}
	dqkv, scratch := make([]float32, len(qkv)), make([]float32, len(probs))
	attentionBackward(v, qkv, dout, dqkv, probs, scratch, nil, 0, 1, n, n, n, d, heads)
	return dqkv
}

// TestPrefixAttentionBackwardOverwritesDQ checks that the backward pass
// of a prefix attention, computing its rows of P again, writes every
// value of dqkv, whatever its buffer held before: zeros in dq past the
// prefix, and elsewhere the gradient that attention over every token
// gives when only the prefix's rows have a gradient (to rounding: the
// two sum the same terms, the full pass with zeros among them).
func TestPrefixAttentionBackwardOverwritesDQ(t *testing.T) {
	const n, d, heads, m = 9, 16, 2, 3
	rng := rand.New(rand.NewPCG(3, 4))
	qkv, dout := make([]float32, n*3*d), make([]float32, n*d)
	for i := range qkv {
		qkv[i] = rng.Float32()*2 - 1
	}
	for i := range dout[:m*d] {
		dout[i] = rng.Float32()*2 - 1
	}
	ldp := probRowStride(n)
	probs, scratch := make([]float32, heads*n*ldp), make([]float32, attentionGradScratch(heads, n, n, true, 0))
	attentionForward(blas.FP32, qkv, make([]float32, n*d), probs, nil, 0, 1, n, n, d, heads, nil)
	want := make([]float32, len(qkv))
	attentionBackward(blas.FP32, qkv, dout, want, probs, scratch, nil, 0, 1, n, n, n, d, heads)

	attentionForward(blas.FP32, qkv, make([]float32, m*d), nil, nil, 0, 1, n, m, d, heads, nil)
	got := make([]float32, len(qkv))
	for i := range got {
		got[i] = float32(math.NaN())
	}
	attentionBackward(blas.FP32, qkv, dout[:m*d], got, nil, scratch, nil, 0, 1, n, m, m, d, heads)
	for i, w := range want {
		if !(math.Abs(float64(got[i]-w)) <= 1e-6) {
			t.Fatalf("dqkv[%d] (token %d, column %d) = %v, attention over every token gives %v", i, i/(3*d), i%(3*d), got[i], w)
		}
	}
}

// TestLowPrecisionAttentionGradient checks, for each low-precision
// variant this CPU runs, the backward pass over heads large enough for
// it (the CIFAR preset's 65 tokens and ViT-B/16's 197) against float32's:
// every gradient within 2% of the largest, the rounding of bfloat16 or
// float16 operands, where a misplaced operand would be off by about all
// of it.
func TestLowPrecisionAttentionGradient(t *testing.T) {
	for _, v := range blas.Variants()[1:] {
		if !v.Runs() {
			continue
		}
		for _, n := range []int{65, 197} {
			if headVariant(v, n, n, 64) != v {
				continue
			}
			low, full := attentionPass(v, n, false), attentionPass(blas.FP32, n, false)
			largest := 0.0
			for _, x := range full {
				largest = math.Max(largest, math.Abs(float64(x)))
			}
			for i := range full {
				if d := math.Abs(float64(low[i] - full[i])); !(d <= 0.02*largest) {
					t.Fatalf("%s over %d tokens: dqkv[%d] = %v, float32's %v (largest %v)", v, n, i, low[i], full[i], largest)
				}
			}
		}
	}
}

// TestAttentionBackwardParts checks that attention's backward pass gives
// the same gradients bit for bit whether each (sample, head) pair has a
// part and blocks of scratch of its own or the parts take several pairs
// in turn in the same blocks, and whether it reads the probabilities the
// forward pass kept or computes them again, with and without attention
// dropout, for every variant this CPU runs.
func TestAttentionBackwardParts(t *testing.T) {
	const b, n, d, heads = 5, 70, 64, 4 // 20 pairs
	ldp := probRowStride(n)
	rng := rand.New(rand.NewPCG(9, 10))
	qkv, dout := make([]float32, b*n*3*d), make([]float32, b*n*d)
	for i := range qkv {
		qkv[i] = rng.Float32()*2 - 1
	}
	for i := range dout {
		dout[i] = rng.Float32()*2 - 1
	}
	keep := make([]uint8, b*heads*n*n)
	for i := range keep {
		keep[i] = uint8(rng.IntN(4)/3 ^ 1) // 3 in 4 kept
	}
	for _, v := range blas.Variants() {
		if !v.Runs() {
			continue
		}
		for _, dropP := range []float64{0, 0.25} {
			var mask []uint8
			if dropP > 0 {
				mask = keep
			}
			probs := make([]float32, b*heads*n*ldp)
			attentionForward(v, qkv, make([]float32, b*n*d), probs, mask, dropP, b, n, n, d, heads, nil)
			backward := func(procs int, probs []float32) []float32 {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				dqkv := make([]float32, len(qkv))
				scratch := make([]float32, attentionGradScratch(b*heads, n, n, probs == nil, dropP))
				attentionBackward(v, qkv, dout, dqkv, probs, scratch, mask, dropP, b, n, n, n, d, heads)
				return dqkv
			}
			want := backward(b*heads, probs) // 20 parts reading the kept P
			for _, way := range []struct {
				name  string
				procs int
				probs []float32
			}{{"one part, kept P", 1, probs}, {"a part a pair, P again", b * heads, nil}, {"one part, P again", 1, nil}} {
				got := backward(way.procs, way.probs)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s, dropout %v, %s: dqkv[%d] = %v, %v with a part a pair reading the kept P", v, dropP, way.name, i, got[i], want[i])
					}
				}
			}
		}
	}
}
