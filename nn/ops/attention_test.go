package ops_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
)

// naiveAttention is multi-head attention written out with loops, following
// timm's reshape(B, N, 3, H, Dh) of the qkv projection.
func naiveAttention(qkv []float64, b, n, d, heads int) []float64 {
	dh := d / heads
	out := make([]float64, b*n*d)
	at := func(bi, t, which, h, j int) float64 { return qkv[(bi*n+t)*3*d+which*d+h*dh+j] }
	for bi := 0; bi < b; bi++ {
		for h := 0; h < heads; h++ {
			for i := 0; i < n; i++ {
				s := make([]float64, n)
				mx := math.Inf(-1)
				for j := 0; j < n; j++ {
					for k := 0; k < dh; k++ {
						s[j] += at(bi, i, 0, h, k) * at(bi, j, 1, h, k)
					}
					s[j] /= math.Sqrt(float64(dh))
					mx = math.Max(mx, s[j])
				}
				sum := 0.0
				for j := range s {
					s[j] = math.Exp(s[j] - mx)
					sum += s[j]
				}
				for k := 0; k < dh; k++ {
					acc := 0.0
					for j := 0; j < n; j++ {
						acc += s[j] / sum * at(bi, j, 2, h, k)
					}
					out[(bi*n+i)*d+h*dh+k] = acc
				}
			}
		}
	}
	return out
}

func TestAttentionMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const b, n, d, heads = 2, 5, 12, 3
	qkv := opstest.Rand(rng, -2, 2, b, n, 3*d)
	r, err := opstest.Eval(func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		out, _, err := ops.NewAttention(in[0], heads, 0, nil)
		return out, err
	}, []*tensor.Dense{qkv}, nil, tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := naiveAttention(qkv.Data().([]float64), b, n, d, heads)
	for i := range want {
		if math.Abs(r.Out[i]-want[i]) > 1e-12 {
			t.Fatalf("element %d: got %v, want %v", i, r.Out[i], want[i])
		}
	}
}

func TestAttentionGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct {
		name  string
		heads int
		drop  float64
	}{{"one head", 1, 0}, {"three heads", 3, 0}, {"attention dropout", 2, 0.3}} {
		t.Run(tc.name, func(t *testing.T) {
			f := func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
				var r *ops.Randomness
				if tc.drop > 0 {
					r = ops.NewRandomness(5)
				}
				out, _, err := ops.NewAttention(in[0], tc.heads, tc.drop, r)
				return out, err
			}
			in := []*tensor.Dense{opstest.Rand(rng, -1.5, 1.5, 2, 7, 3*6)}
			opstest.GradCheck(t, f, in, []int{0}, opstest.Options{MaxSamples: 96})
			opstest.AgreeF32(t, f, in, []int{0}, 2e-5)
		})
	}
}

// TestAttentionProbsRowsSumToOne checks that an op with neither a
// backward pass nor RecordProbs keeps no probabilities, and that after
// RecordProbs each row of them is a distribution.
func TestAttentionProbsRowsSumToOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	qkv := opstest.Rand(rng, -3, 3, 2, 4, 3*8)
	var op *ops.Attention
	if _, err := opstest.Eval(func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		o, a, err := ops.NewAttention(in[0], 2, 0, nil)
		op = a
		return o, err
	}, []*tensor.Dense{qkv}, nil, tensor.Float64, 1); err != nil {
		t.Fatal(err)
	}
	if p, _, _, _ := op.Probs(); p != nil {
		t.Fatalf("an op without a backward pass or RecordProbs kept its probabilities")
	}
	op.RecordProbs()
	if _, err := op.Do(qkv); err != nil {
		t.Fatal(err)
	}
	p, b, h, n := op.Probs()
	if b != 2 || h != 2 || n != 4 || len(p) != b*h*n*n {
		t.Fatalf("probs shape (%d, %d, %d, %d) with %d values", b, h, n, n, len(p))
	}
	for r := 0; r < b*h*n; r++ {
		sum := 0.0
		for _, v := range p[r*n : (r+1)*n] {
			if v < 0 {
				t.Fatalf("negative probability %v", v)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("row %d sums to %v", r, sum)
		}
	}
}

// TestAttentionKeepsSmallProbsForBackward checks that the forward pass of
// an op with a backward pass keeps P for it below
// ops.RecomputedProbsBytes, and from there on keeps nothing (the backward
// pass computes P again): one float32 head of 2047 tokens (rows of 2048)
// and one of 2048.
func TestAttentionKeepsSmallProbsForBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, tc := range []struct {
		n    int
		kept bool
	}{{2047, true}, {2048, false}} {
		if size := tc.n * 2048 * 4; (size < ops.RecomputedProbsBytes) != tc.kept {
			t.Fatalf("%d tokens: P of %d bytes against the threshold's %d", tc.n, size, ops.RecomputedProbsBytes)
		}
		var op *ops.Attention
		if _, err := opstest.Eval(func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
			o, a, err := ops.NewAttention(in[0], 1, 0, nil)
			op = a
			return o, err
		}, []*tensor.Dense{opstest.Rand(rng, -1, 1, 1, tc.n, 3*8)}, []int{0}, tensor.Float32, 1); err != nil {
			t.Fatal(err)
		}
		if p, _, _, _ := op.Probs(); (p != nil) != tc.kept {
			t.Fatalf("%d tokens: the forward pass kept P: %v, want %v", tc.n, p != nil, tc.kept)
		}
	}
}

// TestAttentionIsItsProducts checks attention's output in float32 and
// each low-precision variant, bit for bit, against its steps run one
// after another for each head: q·kᵀ by blas.GemmAs, the softmax of each
// row, and the product with v by blas.GemmAs. Its heads of 197 tokens of
// 64 take the low-precision products, in strips with edge rows.
func TestAttentionIsItsProducts(t *testing.T) {
	const b, n, d, heads = 2, 197, 128, 2
	const dh = d / heads
	rng := rand.New(rand.NewPCG(5, 6))
	qkv := opstest.Rand(rng, -1, 1, b, n, 3*d)
	x := make([]float32, b*n*3*d)
	for i, v := range qkv.Data().([]float64) {
		x[i] = float32(v)
	}
	eachVariant(t, func(v blas.Variant) {
		got, err := opstest.Eval(func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
			out, _, err := ops.NewAttentionAs(v, in[0], heads, 0, nil)
			return out, err
		}, []*tensor.Dense{qkv}, nil, tensor.Float32, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float32, b*n*d)
		s := make([]float32, n*n)
		for bi := range b {
			for h := range heads {
				q := x[bi*n*3*d+h*dh:]
				blas.GemmAs(v, false, true, n, n, dh, 1/float32(math.Sqrt(dh)), q, 3*d, q[d:], 3*d, 0, s, n, nil)
				ops.SoftmaxRows(s, s, n)
				blas.GemmAs(v, false, false, n, dh, n, 1, s, n, q[2*d:], 3*d, 0, want[bi*n*d+h*dh:], d, nil)
			}
		}
		for i, w := range want {
			if g := float32(got.Out[i]); math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("%s: out[%d] = %v, its products %v", v, i, g, w)
			}
		}
	})
}

// TestPrefixAttentionIsAttentionsRows checks a prefix attention against
// attention over every token followed by the same prefix's rows: its
// output bit for bit, in float64 and float32, and the gradient reaching
// qkv (dq zero past the prefix) to rounding; and its own gradient
// numerically, with and without attention dropout.
func TestPrefixAttentionIsAttentionsRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	const b, n, d, heads = 2, 7, 12, 3
	qkv := opstest.Rand(rng, -1.5, 1.5, b, n, 3*d)
	for _, q := range []int{1, 2, n} {
		prefix := func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
			out, _, err := ops.NewPrefixAttentionAs(blas.FP32, in[0], heads, q, 0, nil)
			return out, err
		}
		rows := func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
			out, _, err := ops.NewAttention(in[0], heads, 0, nil)
			if err != nil {
				return nil, err
			}
			return ops.Tokens(out, 0, q)
		}
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			got, err := opstest.Eval(prefix, []*tensor.Dense{qkv}, []int{0}, dt, 1)
			if err != nil {
				t.Fatal(err)
			}
			want, err := opstest.Eval(rows, []*tensor.Dense{qkv}, []int{0}, dt, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Out) != b*q*d {
				t.Fatalf("%d queries: %d values, want %d", q, len(got.Out), b*q*d)
			}
			for i, w := range want.Out {
				if got.Out[i] != w {
					t.Fatalf("%v, %d queries: out[%d] = %v, attention's row %v", dt, q, i, got.Out[i], w)
				}
			}
			tol := 1e-13
			if dt == tensor.Float32 {
				tol = 1e-6
			}
			for i, w := range want.Grads[0] {
				if !(math.Abs(got.Grads[0][i]-w) <= tol) {
					t.Fatalf("%v, %d queries: dqkv[%d] = %v, attention's %v", dt, q, i, got.Grads[0][i], w)
				}
				if token, col := i/(3*d)%n, i%(3*d); token >= q && col < d && got.Grads[0][i] != 0 {
					t.Fatalf("%v, %d queries: dq of token %d is %v, want 0", dt, q, token, got.Grads[0][i])
				}
			}
		}
	}
	for _, drop := range []float64{0, 0.3} {
		f := func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
			var r *ops.Randomness
			if drop > 0 {
				r = ops.NewRandomness(5)
			}
			out, _, err := ops.NewPrefixAttentionAs(blas.FP32, in[0], 2, 2, drop, r)
			return out, err
		}
		in := []*tensor.Dense{opstest.Rand(rng, -1.5, 1.5, 2, 7, 3*6)}
		opstest.GradCheck(t, f, in, []int{0}, opstest.Options{MaxSamples: 96})
		opstest.AgreeF32(t, f, in, []int{0}, 2e-5)
	}
}

// TestPrefixAttentionRecordsEveryRow checks that a prefix attention
// asked to record its probabilities records those of every token, as
// attention over all of them does, and still outputs its prefix's rows.
func TestPrefixAttentionRecordsEveryRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	const b, n, d, heads, q = 2, 5, 8, 2, 2
	qkv := opstest.Rand(rng, -2, 2, b, n, 3*d)
	var full, prefix *ops.Attention
	var fullOut, prefixOut *gorgonia.Node
	g := gorgonia.NewGraph()
	x := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(b, n, 3*d), gorgonia.WithValue(qkv))
	var err error
	if fullOut, full, err = ops.NewAttention(x, heads, 0, nil); err != nil {
		t.Fatal(err)
	}
	if prefixOut, prefix, err = ops.NewPrefixAttentionAs(blas.FP32, x, heads, q, 0, nil); err != nil {
		t.Fatal(err)
	}
	full.RecordProbs()
	prefix.RecordProbs()
	want, err := full.Do(qkv)
	if err != nil {
		t.Fatal(err)
	}
	got, err := prefix.Do(qkv)
	if err != nil {
		t.Fatal(err)
	}
	if s := prefixOut.Shape(); !s.Eq(tensor.Shape{b, q, d}) || !fullOut.Shape().Eq(tensor.Shape{b, n, d}) {
		t.Fatalf("shapes %v and %v", s, fullOut.Shape())
	}
	w, gv := want.Data().([]float64), got.Data().([]float64)
	if len(gv) != b*q*d {
		t.Fatalf("%d values, want %d", len(gv), b*q*d)
	}
	for bi := range b {
		for i := range q * d {
			if gv[bi*q*d+i] != w[bi*n*d+i] {
				t.Fatalf("sample %d, value %d: %v, attention's %v", bi, i, gv[bi*q*d+i], w[bi*n*d+i])
			}
		}
	}
	pw, _, _, _ := full.Probs()
	pg, pb, ph, pn := prefix.Probs()
	if pb != b || ph != heads || pn != n || len(pg) != len(pw) {
		t.Fatalf("probs (%d, %d, %d, %d) with %d values, want %d", pb, ph, pn, pn, len(pg), len(pw))
	}
	for i := range pw {
		if pg[i] != pw[i] {
			t.Fatalf("probs[%d] = %v, attention's %v", i, pg[i], pw[i])
		}
	}
}
