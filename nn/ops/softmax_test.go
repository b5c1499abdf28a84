package ops_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
)

func softmaxFunc(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
	return ops.Softmax(in[0])
}

func logSoftmaxFunc(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
	return ops.LogSoftmax(in[0])
}

func TestSoftmaxGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, shape := range [][]int{{7}, {2, 5}, {2, 3, 4}} {
		inputs := []*tensor.Dense{opstest.Rand(rng, -3, 3, shape...)}
		for _, f := range []opstest.Func{softmaxFunc, logSoftmaxFunc} {
			opstest.GradCheck(t, f, inputs, []int{0}, opstest.Options{})
			opstest.AgreeF32(t, f, inputs, []int{0}, 2e-6)
		}
	}
}

func TestSoftmaxValues(t *testing.T) {
	x := []float64{
		1, 2, 3,
		1000, -1000, 0, // overflows e^x without the max subtracted
		-1000, -1001, -1002, // underflows e^x without the max subtracted
	}
	z := math.Exp(1) + math.Exp(2) + math.Exp(3)
	z3 := 1 + math.Exp(-1) + math.Exp(-2)
	wantSoft := []float64{
		math.Exp(1) / z, math.Exp(2) / z, math.Exp(3) / z,
		1, 0, math.Exp(-1000),
		1 / z3, math.Exp(-1) / z3, math.Exp(-2) / z3,
	}
	wantLog := []float64{
		1 - math.Log(z), 2 - math.Log(z), 3 - math.Log(z),
		0, -2000, -1000,
		-math.Log(z3), -1 - math.Log(z3), -2 - math.Log(z3),
	}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		tol := 1e-15
		if dt == tensor.Float32 {
			tol = 3e-7
		}
		inputs := []*tensor.Dense{dense(x, 3, 3)}
		got, _ := fusedEval(t, softmaxFunc, inputs, nil, nil, dt)
		assertClose(t, dt.String()+" Softmax", got, wantSoft, tol)
		got, _ = fusedEval(t, logSoftmaxFunc, inputs, nil, nil, dt)
		assertClose(t, dt.String()+" LogSoftmax", got, wantLog, tol)
	}
}

// TestSoftmaxGradValues checks the backward against the Jacobian written
// out: ∂softmax_i/∂x_j = s_i(δ_ij − s_j), ∂log_softmax_i/∂x_j = δ_ij − s_j.
func TestSoftmaxGradValues(t *testing.T) {
	x := []float64{0.5, -1, 2}
	dy := []float64{1, -2, 0.25}
	e := []float64{math.Exp(0.5), math.Exp(-1), math.Exp(2)}
	z := e[0] + e[1] + e[2]
	s := []float64{e[0] / z, e[1] / z, e[2] / z}
	wantSoft, wantLog := make([]float64, 3), make([]float64, 3)
	for j := range 3 {
		for i := range 3 {
			delta := 0.0
			if i == j {
				delta = 1
			}
			wantSoft[j] += dy[i] * s[i] * (delta - s[j])
			wantLog[j] += dy[i] * (delta - s[j])
		}
	}
	_, grads := fusedEval(t, softmaxFunc, []*tensor.Dense{dense(x, 3)}, dense(dy, 3), []int{0}, tensor.Float64)
	assertClose(t, "Softmax grad", grads[0], wantSoft, 1e-15)
	_, grads = fusedEval(t, logSoftmaxFunc, []*tensor.Dense{dense(x, 3)}, dense(dy, 3), []int{0}, tensor.Float64)
	assertClose(t, "LogSoftmax grad", grads[0], wantLog, 1e-15)
}

// TestSoftmaxAndLogSoftmaxStayDistinct guards against Gorgonia merging the
// two ops on one input into a single node.
func TestSoftmaxAndLogSoftmaxStayDistinct(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("x"))
	s, err := ops.Softmax(x)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ops.LogSoftmax(x)
	if err != nil {
		t.Fatal(err)
	}
	if s == l {
		t.Fatal("Softmax and LogSoftmax of one input are the same node")
	}
	if s2, _ := ops.Softmax(x); s2 != s {
		t.Error("two Softmax nodes of one input were not shared")
	}
	if _, err := ops.Softmax(gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("c"))); err == nil {
		t.Error("expected an error for a scalar input")
	}
}

func TestSoftmaxRowKernelsInPlace(t *testing.T) {
	x := []float32{1, 2, 3, 1000, -1000, 0}
	ops.SoftmaxRows(x, x, 3)
	z := math.Exp(1) + math.Exp(2) + math.Exp(3)
	want := []float64{math.Exp(1) / z, math.Exp(2) / z, math.Exp(3) / z, 1, 0, 0}
	for i, v := range x {
		if math.Abs(float64(v)-want[i]) > 3e-7 {
			t.Fatalf("SoftmaxRows in place [%d] = %g, want %g", i, v, want[i])
		}
	}
	y := []float64{1, 2, 3, 1000, -1000, 0}
	ops.LogSoftmaxRows(y, y, 3)
	wantLog := []float64{1 - math.Log(z), 2 - math.Log(z), 3 - math.Log(z), 0, -2000, -1000}
	assertClose(t, "LogSoftmaxRows in place", y, wantLog, 1e-15)

	// Backward kernels writing over dy.
	s := []float64{0.2, 0.3, 0.5}
	dy := []float64{1, 2, 3}
	dot := 0.2*1 + 0.3*2 + 0.5*3
	ops.SoftmaxRowsGrad(s, dy, dy, 3)
	assertClose(t, "SoftmaxRowsGrad in place", dy, []float64{0.2 * (1 - dot), 0.3 * (2 - dot), 0.5 * (3 - dot)}, 1e-15)
	ls := []float64{math.Log(0.2), math.Log(0.3), math.Log(0.5)}
	dy = []float64{1, 2, 3}
	ops.LogSoftmaxRowsGrad(ls, dy, dy, 3)
	assertClose(t, "LogSoftmaxRowsGrad in place", dy, []float64{1 - 0.2*6, 2 - 0.3*6, 3 - 0.5*6}, 1e-15)
}

// TestGorgoniaSoftMaxIsWrongOnLaterRows documents why Softmax exists:
// Gorgonia's SoftMax starts every row's maximum from the first row's first
// element, so a row far below it underflows to 0/0.
func TestGorgoniaSoftMaxIsWrongOnLaterRows(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1000, -1000, 0, 1, 2, 3}))))
	s, err := gorgonia.SoftMax(x)
	if err != nil {
		t.Fatal(err)
	}
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	got := s.Value().Data().([]float64)
	if !math.IsNaN(got[3]) {
		t.Fatalf("gorgonia.SoftMax([[1000, -1000, 0], [1, 2, 3]]) = %v: its second row is no longer NaN", got)
	}
	mine, _ := fusedEval(t, softmaxFunc, []*tensor.Dense{dense([]float64{1000, -1000, 0, 1, 2, 3}, 2, 3)}, nil, nil, tensor.Float64)
	for i, v := range mine {
		if math.IsNaN(v) {
			t.Fatalf("ops.Softmax [%d] is NaN", i)
		}
	}
}

// BenchmarkSoftmax is forward and backward of Softmax over ViT-S attention
// scores (64 images × 6 heads × 65 queries, 65 keys) in float32.
func BenchmarkSoftmax(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	benchFused(b, softmaxFunc, []*tensor.Dense{opstest.Rand(rng, -8, 8, 64*6*65, 65)}, []int{0})
}
