package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/runner"
)

// TestBiasGradientBesideWeight checks, in each variant this CPU runs,
// the bias gradient of a linear layer over 100 rows (several of
// blas.RowSums's runs): in a low-precision variant it is blas.RowSums of
// the output gradient bit for bit, taken by the weight gradient's op and
// given out after it by LinearGradBias; in float32 it is SumRows's.
func TestBiasGradientBesideWeight(t *testing.T) {
	const rows, k, n = 100, 64, 24
	rng := rand.New(rand.NewPCG(13, 14))
	fill := func(size int) []float32 {
		f := make([]float32, size)
		for i := range f {
			f[i] = float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(9)-4)))
		}
		return f
	}
	x, w, b, r := fill(rows*k), fill(n*k), fill(n), fill(rows*n)
	for _, v := range blas.Variants() {
		if !v.Runs() {
			continue
		}
		g := gorgonia.NewGraph()
		node := func(name string, data []float32, shape ...int) *gorgonia.Node {
			return gorgonia.NodeFromAny(g, tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data)), gorgonia.WithName(name))
		}
		xn, wn, bn, rn := node("x", x, 2, rows/2, k), node("w", w, n, k), node("b", b, n), node("r", r, 2, rows/2, n)
		y, err := LinearAs(v, xn, wn, bn)
		if err != nil {
			t.Fatal(err)
		}
		prog, grads := runProjectedGrads(t, y, rn, bn)
		var given *biasSums
		for _, nd := range g.AllNodes() {
			if op, ok := nd.Op().(*linearGradBias); ok {
				given = op.sums
			}
		}
		if v.IsFP32() != (given == nil) {
			t.Fatalf("%s: LinearGradBias in the graph: %v, want %v", v, given != nil, !v.IsFP32())
		}
		got := prog.Value(grads[0]).Data().([]float32)
		want := make([]float32, n)
		if v.IsFP32() {
			for i := range rows {
				for j := range n {
					want[j] += r[i*n+j]
				}
			}
		} else {
			blas.RowSums(true, n, rows, r, n, want)
			if given.from.first != nil {
				t.Errorf("%s: the weight gradient's sums were left, not given out", v)
			}
		}
		for j := range n {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
				t.Fatalf("%s: db[%d] = %v, want %v", v, j, got[j], want[j])
			}
		}
	}
}

// TestLinearGradBiasSumsItsOwn checks that LinearGradBias sums dy itself
// when the sums its weight gradient's op holds are another dy's.
func TestLinearGradBiasSumsItsOwn(t *testing.T) {
	sums := new(biasSums)
	copy(sums.start(3), []float32{7, 8, 9})
	other := []float32{1, 2, 3, 4, 5, 6}
	sums.finish(other)
	dy := []float32{1, 2, 3, 10, 20, 30}
	op := newLinearGradBias(2, 2, sums)
	got, err := op.Do(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(dy)), tensor.New(tensor.WithShape(3, 1), tensor.WithBacking([]float32{0, 0, 0})))
	if err != nil {
		t.Fatal(err)
	}
	if d := got.Data().([]float32); d[0] != 11 || d[1] != 22 || d[2] != 33 {
		t.Fatalf("LinearGradBias of another dy's sums gave %v, want [11 22 33]", d)
	}
	if sums.take(other) == nil {
		t.Fatal("LinearGradBias of another dy took the sums")
	}
}

// runProjectedGrads compiles and runs the gradients of Σ y·r (elementwise)
// with respect to wrt: the gradient reaching y is r itself.
func runProjectedGrads(t *testing.T, y, r *gorgonia.Node, wrt ...*gorgonia.Node) (*runner.Program, gorgonia.Nodes) {
	t.Helper()
	prod, err := gorgonia.HadamardProd(y, r)
	if err != nil {
		t.Fatal(err)
	}
	cost, err := gorgonia.Sum(prod)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := gorgonia.Grad(cost, wrt...)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := runner.Compile(y.Graph(), grads...)
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	return prog, grads
}
