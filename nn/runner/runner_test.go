package runner_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/runner"
)

// chain builds y = L4(L3(L2(L1(x)))) of square Linear layers, whose
// intermediate buffers the planner can share, and returns the graph, x, the
// weights and y.
func chain(t *testing.T, n, d int) (*gorgonia.ExprGraph, *gorgonia.Node, []*tensor.Dense, *gorgonia.Node) {
	t.Helper()
	g := gorgonia.NewGraph()
	rng := rand.New(rand.NewPCG(1, 2))
	rand64 := func(shape ...int) *tensor.Dense {
		v := make([]float64, tensor.Shape(shape).TotalSize())
		for i := range v {
			v[i] = rng.Float64() - 0.5
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
	}
	xv := rand64(n, d)
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(n, d), gorgonia.WithName("x"), gorgonia.WithValue(xv))
	ws := []*tensor.Dense{xv}
	y := x
	for i := 0; i < 4; i++ {
		wv := rand64(d, d)
		w := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(d, d), gorgonia.WithName(string(rune('a'+i))), gorgonia.WithValue(wv))
		ws = append(ws, wv)
		var err error
		if y, err = ops.Linear(y, w, nil); err != nil {
			t.Fatal(err)
		}
	}
	return g, x, ws, y
}

// reference computes the chain with loops.
func reference(ws []*tensor.Dense, n, d int) []float64 {
	cur := append([]float64(nil), ws[0].Data().([]float64)...)
	for _, wt := range ws[1:] {
		w := wt.Data().([]float64)
		next := make([]float64, n*d)
		for r := 0; r < n; r++ {
			for o := 0; o < d; o++ {
				for k := 0; k < d; k++ {
					next[r*d+o] += cur[r*d+k] * w[o*d+k]
				}
			}
		}
		cur = next
	}
	return cur
}

// layers returns the outputs of the chain's four Linear layers, first to
// last (y is the fourth).
func layers(g *gorgonia.ExprGraph, y *gorgonia.Node) []*gorgonia.Node {
	out := []*gorgonia.Node{y}
	for n := y; len(out) < 4; {
		it := g.From(n.ID()) // n's inputs: the previous layer, then the weight
		it.Next()
		n = it.Node().(*gorgonia.Node)
		out = append([]*gorgonia.Node{n}, out...)
	}
	return out
}

func TestReusedBuffersGiveCorrectResults(t *testing.T) {
	const n, d = 3, 5
	g, _, ws, y := chain(t, n, d)
	p, err := runner.Compile(g, y)
	if err != nil {
		t.Fatal(err)
	}
	want := reference(ws, n, d)
	for run := 0; run < 3; run++ { // repeated runs reuse the same buffers
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		got := p.Value(y).Data().([]float64)
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Fatalf("run %d, element %d: %v, want %v", run, i, got[i], want[i])
			}
		}
	}
	if p.Steps() != 4 {
		t.Fatalf("%d steps, want 4", p.Steps())
	}
	// Layer 1's buffer is free once layer 2 has read it, so layer 3 writes
	// into it; layer 2's goes to layer 4 likewise: two buffers for four
	// values.
	l := layers(g, y)
	buf := func(i int) *float64 { return &p.Value(l[i]).Data().([]float64)[0] }
	if buf(0) != buf(2) || buf(1) != buf(3) || buf(0) == buf(1) {
		t.Error("layers 1 and 3 (and 2 and 4) do not share a buffer, or layers 1 and 2 do")
	}
	if b := p.BufferBytes(); b != 2*n*d*8 {
		t.Errorf("BufferBytes %d, want two buffers of %d", b, n*d*8)
	}
}

func TestInputsAreReadAtEveryRun(t *testing.T) {
	const n, d = 2, 3
	g, x, ws, y := chain(t, n, d)
	p, err := runner.Compile(g, y)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	xs := x.Value().Data().([]float64)
	for i := range xs {
		xs[i] *= 2 // the chain is linear: y doubles
	}
	want := reference(ws, n, d)
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	got := p.Value(y).Data().([]float64)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("element %d: %v, want %v", i, got[i], want[i])
		}
	}
	if p.Value(gorgonia.NewScalar(gorgonia.NewGraph(), tensor.Float64, gorgonia.WithName("other"))) != nil {
		t.Fatal("a node outside the program has no value")
	}
}

func TestRunAllocatesNothing(t *testing.T) {
	g, _, _, y := chain(t, 64, 32)
	p, err := runner.Compile(g, y)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(10, func() { _ = p.Run() }); a > 0 {
		t.Fatalf("Run allocates %v times", a)
	}
}

// TestSubstitute checks that the Adds gorgonia.Grad inserts to sum the
// gradient of a value read twice run as ops' own Add once substituted:
// the gradients stay bit for bit those of Gorgonia's Add, and a run of the
// backward pass then allocates nothing.
func TestSubstitute(t *testing.T) {
	g, x, _, y := chain(t, 16, 8)
	// x is read by the chain's first layer and by the residual Add below.
	sum, err := ops.Add(y, x)
	if err != nil {
		t.Fatal(err)
	}
	cost, err := ops.SoftTargetCrossEntropy(sum, x)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := gorgonia.Grad(cost, x)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := runner.Compile(g, grads[0])
	if err != nil {
		t.Fatal(err)
	}
	native, err := runner.Compile(g, grads[0])
	if err != nil {
		t.Fatal(err)
	}
	if n := native.Substitute(g, ops.NativeOp); n < 1 {
		t.Fatalf("Substitute changed %d steps, want the gradient sums", n)
	}
	if n := native.Substitute(g, func(*gorgonia.Node, []*gorgonia.Node) (gorgonia.UsePreallocDoer, bool) { return nil, false }); n != 0 {
		t.Fatalf("a Native that declines every node changed %d steps", n)
	}
	for _, p := range []*runner.Program{plain, native} {
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
	}
	want := plain.Value(grads[0]).Data().([]float64)
	got := native.Value(grads[0]).Data().([]float64)
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("gradient %d: %v with ops' Add, %v with Gorgonia's", i, got[i], want[i])
		}
	}
	if a := testing.AllocsPerRun(10, func() { _ = native.Run() }); a > 0 {
		t.Errorf("the substituted backward pass allocates %v times per run", a)
	}
}
