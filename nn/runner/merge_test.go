package runner_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/runner"
)

// residualLayerNorm builds cost = SoftTargetCrossEntropy(LayerNorm(x) + x,
// targets) on (rows, d) values of dt, a pre-norm residual connection: x's
// gradient is Gorgonia's Add of LayerNorm's input gradient and the sum's
// gradient. It returns the graph and the gradients of x, LayerNorm's
// weight and its bias.
func residualLayerNorm(t *testing.T, dt tensor.Dtype, rows, d int) (*gorgonia.ExprGraph, []*gorgonia.Node) {
	t.Helper()
	g := gorgonia.NewGraph()
	r := rand.New(rand.NewPCG(5, 6))
	values := func(n int) any {
		if dt == tensor.Float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(r.NormFloat64())
			}
			return v
		}
		v := make([]float64, n)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		return v
	}
	node := func(name string, shape ...int) *gorgonia.Node {
		n := gorgonia.NewTensor(g, dt, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name))
		if err := gorgonia.Let(n, tensor.New(tensor.WithShape(shape...), tensor.WithBacking(values(tensor.Shape(shape).TotalSize())))); err != nil {
			t.Fatal(err)
		}
		return n
	}
	x, w, b, targets := node("x", rows, d), node("w", d), node("b", d), node("targets", rows, d)
	h, err := ops.LayerNorm(x, w, b, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := ops.Add(h, x)
	if err != nil {
		t.Fatal(err)
	}
	cost, err := ops.SoftTargetCrossEntropy(sum, targets)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := gorgonia.Grad(cost, x, w, b)
	if err != nil {
		t.Fatal(err)
	}
	return g, grads
}

// opNames returns the names of the ops a run of p runs, one per kind.
func opNames(t *testing.T, p *runner.Program) []string {
	t.Helper()
	times := p.TimeOps()
	defer p.StopTiming()
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range times.ByOp() {
		names = append(names, o.Op)
	}
	return names
}

// sameValues fails t unless want and got hold the same values of nodes, bit
// for bit.
func sameValues(t *testing.T, want, got *runner.Program, nodes []*gorgonia.Node) {
	t.Helper()
	bits := func(v gorgonia.Value) []uint64 {
		switch d := v.Data().(type) {
		case []float32:
			out := make([]uint64, len(d))
			for i, f := range d {
				out[i] = uint64(math.Float32bits(f))
			}
			return out
		case []float64:
			out := make([]uint64, len(d))
			for i, f := range d {
				out[i] = math.Float64bits(f)
			}
			return out
		}
		t.Fatalf("unexpected value %T", v.Data())
		return nil
	}
	for _, n := range nodes {
		if w, g := bits(want.Value(n)), bits(got.Value(n)); !slices.Equal(w, g) {
			t.Errorf("%s differs between the programs", n.Name())
		}
	}
}

// TestMergeSums checks that the sum of LayerNorm's input gradient and
// another gradient is merged into LayerNorm's backward op, which then adds
// the other gradient as it stores its rows, with every gradient, the
// LayerNorm weight's (whose op reads the merged term only to run after
// it) included, the same bit for bit as the program that runs the sum on
// its own; and that nothing is merged where the term's value is needed
// elsewhere.
func TestMergeSums(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			g, grads := residualLayerNorm(t, dt, 37, 24)
			compile := func(merge runner.Merge, outputs ...*gorgonia.Node) *runner.Program {
				p, err := runner.CompileWith(g, runner.Options{Merge: merge}, outputs...)
				if err != nil {
					t.Fatal(err)
				}
				p.Substitute(g, ops.NativeOp)
				if err := p.Run(); err != nil {
					t.Fatal(err)
				}
				return p
			}
			plain := compile(nil, grads...)
			merged := compile(ops.MergeSum, grads...)
			if merged.Steps() != plain.Steps()-1 {
				t.Errorf("merged program runs %d steps, want one fewer than %d", merged.Steps(), plain.Steps())
			}
			if names := opNames(t, merged); !slices.Contains(names, "LayerNormGradInput+Add") || slices.Contains(names, "LayerNormGradInput") {
				t.Errorf("merged program runs %v, want LayerNormGradInput+Add in place of LayerNormGradInput", names)
			}
			sameValues(t, plain, merged, grads)
			if a := testing.AllocsPerRun(5, func() { _ = merged.Run() }); a > 0 {
				t.Errorf("the merged program allocates %v times a run", a)
			}

			term := layerNormInputGradient(t, g, grads[0])
			outputTerm := compile(ops.MergeSum, append(slices.Clone(grads), term)...)
			if outputTerm.Steps() != plain.Steps() {
				t.Errorf("with the term an output, %d steps, want %d (nothing merged)", outputTerm.Steps(), plain.Steps())
			}
			sameValues(t, plain, outputTerm, grads)

			double, err := ops.Add(term, term)
			if err != nil {
				t.Fatal(err)
			}
			readTwice := compile(ops.MergeSum, append(slices.Clone(grads), double)...)
			if readTwice.Steps() != plain.Steps()+1 {
				t.Errorf("with the term read by another sum, %d steps, want %d (nothing merged)", readTwice.Steps(), plain.Steps()+1)
			}
			sameValues(t, plain, readTwice, grads)
		})
	}
}

// layerNormInputGradient returns the input of the sum dx that LayerNorm's
// input gradient makes.
func layerNormInputGradient(t *testing.T, g *gorgonia.ExprGraph, dx *gorgonia.Node) *gorgonia.Node {
	t.Helper()
	for _, c := range runner.Inputs(g, dx) {
		if fmt.Sprint(c.Op()) == "LayerNormGradInput" {
			return c
		}
	}
	t.Fatalf("%v's inputs hold no LayerNorm input gradient", dx)
	return nil
}
