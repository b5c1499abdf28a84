package ops_test

import (
	"fmt"
	"math"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops/opstest"
	"github.com/vit-train/vit-train/nn/runner"
)

// Helpers shared by the tests of the fused ops in this package's test files.

// fusedGraph is f applied to input nodes, with the backward of an upstream
// gradient dy (or of the scalar output itself) to the inputs in wrt.
type fusedGraph struct {
	g      *gorgonia.ExprGraph
	inputs []*gorgonia.Node
	out    *gorgonia.Node
	grads  gorgonia.Nodes
	prog   *runner.Program
}

// buildFused builds f on inputs converted to dt. dy, shaped like the output,
// is backpropagated to the inputs listed in wrt; a scalar output is
// differentiated directly when dy is nil.
func buildFused(t testing.TB, f opstest.Func, inputs []*tensor.Dense, dy *tensor.Dense, wrt []int, dt tensor.Dtype) *fusedGraph {
	t.Helper()
	fg := &fusedGraph{g: gorgonia.NewGraph()}
	for i, in := range inputs {
		n := gorgonia.NewTensor(fg.g, dt, in.Dims(), gorgonia.WithShape(in.Shape()...),
			gorgonia.WithName(fmt.Sprintf("in%d", i)), gorgonia.WithValue(opstest.Convert(in, dt)))
		fg.inputs = append(fg.inputs, n)
	}
	out, err := f(fg.g, fg.inputs)
	if err != nil {
		t.Fatal(err)
	}
	fg.out = out
	var wrtNodes gorgonia.Nodes
	for _, i := range wrt {
		wrtNodes = append(wrtNodes, fg.inputs[i])
	}
	switch {
	case len(wrt) == 0:
	case dy == nil:
		if fg.grads, err = gorgonia.Grad(out, wrtNodes...); err != nil {
			t.Fatal(err)
		}
	default:
		dyNode := gorgonia.NewTensor(fg.g, dt, dy.Dims(), gorgonia.WithShape(dy.Shape()...),
			gorgonia.WithName("dy"), gorgonia.WithValue(opstest.Convert(dy, dt)))
		if fg.grads, err = gorgonia.Backpropagate(gorgonia.Nodes{out}, gorgonia.Nodes{dyNode}, wrtNodes); err != nil {
			t.Fatal(err)
		}
	}
	if fg.prog, err = runner.Compile(fg.g, append(gorgonia.Nodes{out}, fg.grads...)...); err != nil {
		t.Fatal(err)
	}
	return fg
}

// run executes the graph and returns the output and the gradients as float64.
func (fg *fusedGraph) run(t testing.TB) (out []float64, grads [][]float64) {
	t.Helper()
	if err := fg.prog.Run(); err != nil {
		t.Fatal(err)
	}
	out = opstest.Float64s(fg.prog.Value(fg.out))
	for _, g := range fg.grads {
		grads = append(grads, opstest.Float64s(fg.prog.Value(g)))
	}
	return out, grads
}

// fusedEval builds and runs f once; see buildFused.
func fusedEval(t testing.TB, f opstest.Func, inputs []*tensor.Dense, dy *tensor.Dense, wrt []int, dt tensor.Dtype) ([]float64, [][]float64) {
	t.Helper()
	return buildFused(t, f, inputs, dy, wrt, dt).run(t)
}

// dense returns a float64 tensor of the given shape holding data.
func dense(data []float64, shape ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), data...)))
}

// filled returns a float64 tensor of the given shape with every element v.
func filled(v float64, shape ...int) *tensor.Dense {
	d := make([]float64, tensor.Shape(shape).TotalSize())
	for i := range d {
		d[i] = v
	}
	return dense(d, shape...)
}

// assertClose fails unless |got[i] − want[i]| ≤ tol·max(1, |want[i]|) for all i.
func assertClose(t testing.TB, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*math.Max(1, math.Abs(want[i]))) {
			t.Fatalf("%s[%d] = %.10g, want %.10g (|diff| %.3g > tol %.3g)", what, i, got[i], want[i], d, tol)
		}
	}
}

// benchFused times forward and backward of f on float32 inputs, for an op
// whose output is shaped like inputs[0], reporting throughput over the
// elements of the output.
func benchFused(b *testing.B, f opstest.Func, inputs []*tensor.Dense, wrt []int) {
	fg := buildFused(b, f, inputs, filled(0.5, inputs[0].Shape()...), wrt, tensor.Float32)
	n := fg.out.Shape().TotalSize()
	b.SetBytes(int64(4 * n))
	b.ResetTimer()
	for b.Loop() {
		if err := fg.prog.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
}
