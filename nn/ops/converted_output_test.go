package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/runner"
)

// TestConvertedInputs checks, for each low-precision variant this CPU
// runs, that a linear layer reading the output of a LayerNorm, a
// LinearGELU or an Attention, with its weight packed as evaluation and
// training graphs keep it, takes that output as its producer converted
// it, and that its values are then bit for bit those of the same layer
// converting a copy of the output itself.
func TestConvertedInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	randDense := func(lo, hi float64, shape ...int) *tensor.Dense { return uniform32(rng, lo, hi, shape...) }
	producers := []struct {
		name string
		k    int // the producer's output width: the layer's K
		make func(v blas.Variant, g *gorgonia.ExprGraph) (*gorgonia.Node, []gorgonia.Value, error)
	}{
		{"LayerNorm", 97, func(v blas.Variant, g *gorgonia.ExprGraph) (*gorgonia.Node, []gorgonia.Value, error) {
			in := []gorgonia.Value{randDense(-2, 2, 2, 40, 97), randDense(0.5, 1.5, 97), randDense(-1, 1, 97)}
			y, err := LayerNorm(node(g, in[0]), node(g, in[1]), node(g, in[2]), 1e-6)
			return y, in, err
		}},
		{"LinearGELU", 130, func(v blas.Variant, g *gorgonia.ExprGraph) (*gorgonia.Node, []gorgonia.Value, error) {
			in := []gorgonia.Value{randDense(-2, 2, 2, 40, 96), randDense(-0.2, 0.2, 130, 96), randDense(-1, 1, 130)}
			y, err := LinearGELUAs(v, node(g, in[0]), node(g, in[1]), node(g, in[2]))
			if err == nil {
				y.Op().(*linearGELUOp).FreezeWeight(true)
			}
			return y, in, err
		}},
		{"Attention", 96, func(v blas.Variant, g *gorgonia.ExprGraph) (*gorgonia.Node, []gorgonia.Value, error) {
			in := []gorgonia.Value{randDense(-2, 2, 2, 70, 288)}
			y, _, err := NewAttentionAs(v, node(g, in[0]), 2, 0, nil)
			return y, in, err
		}},
	}
	for _, v := range blas.Variants() {
		if v.IsFP32() || !v.Runs() {
			continue
		}
		for _, p := range producers {
			label := fmt.Sprintf("%s %s", v, p.name)
			g := gorgonia.NewGraph()
			x, in, err := p.make(v, g)
			if err != nil {
				t.Fatal(err)
			}
			w, b := randDense(-0.2, 0.2, 50, p.k), randDense(-1, 1, 50)
			linked := linearOf(t, v, x, w, b)
			if linked.input == nil {
				t.Fatalf("%s: the layer does not read its input converted", label)
			}
			y, err := x.Op().Do(in...)
			if err != nil {
				t.Fatal(err)
			}
			ys := y.(*tensor.Dense).Data().([]float32)
			reads := v == blas.BF16 || v == blas.AMX // the kernels that read A as rows
			if converted := linked.input.from.first == &ys[0]; converted != reads {
				t.Fatalf("%s: the output converted: %v, want %v", label, converted, reads)
			}
			got, err := linked.Do(y, w, b)
			if err != nil {
				t.Fatal(err)
			}
			if linked.input.from.first != nil {
				t.Fatalf("%s: the converted output was kept after the product read it", label)
			}
			// The same layer on a copy, which its producer did not convert.
			alone := linearOf(t, v, node(gorgonia.NewGraph(), y), w, b)
			want, err := alone.Do(y.(*tensor.Dense).Clone().(*tensor.Dense), w, b)
			if err != nil {
				t.Fatal(err)
			}
			gs, ws := got.(*tensor.Dense).Data().([]float32), want.(*tensor.Dense).Data().([]float32)
			for i := range ws {
				if math.Float32bits(gs[i]) != math.Float32bits(ws[i]) {
					t.Fatalf("%s: y[%d] = %v from the converted output, %v converting it", label, i, gs[i], ws[i])
				}
			}
		}
	}
}

// uniform32 is a float32 tensor of the given shape, uniform in [lo, hi).
func uniform32(rng *rand.Rand, lo, hi float64, shape ...int) *tensor.Dense {
	d := tensor.New(tensor.WithShape(shape...), tensor.Of(tensor.Float32))
	data := d.Data().([]float32)
	for i := range data {
		data[i] = float32(lo + (hi-lo)*rng.Float64())
	}
	return d
}

// node is a graph input holding v.
func node(g *gorgonia.ExprGraph, v gorgonia.Value) *gorgonia.Node { return gorgonia.NodeFromAny(g, v) }

// linearOf returns the op of LinearAs(v, x, w, b), its weight frozen.
func linearOf(t *testing.T, v blas.Variant, x *gorgonia.Node, w, b gorgonia.Value) *linearOp {
	t.Helper()
	y, err := LinearAs(v, x, node(x.Graph(), w), node(x.Graph(), b))
	if err != nil {
		t.Fatal(err)
	}
	op := y.Op().(*linearOp)
	op.FreezeWeight(true)
	return op
}

// TestConvertedGradients checks, for each low-precision variant this CPU
// runs, that a training graph of a ViT block's ops (LayerNorm, then an
// MLP, LinearGELU and Linear, and attention, Linear, Attention and
// Linear) gives the same outputs and gradients bit for bit with its
// weights kept packed, as training keeps them, where the forward
// products of qkv, fc1, fc2 and the projection read what LayerNorm,
// LinearGELU and Attention converted, as without, where every product
// converts its own operands.
func TestConvertedGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	values := map[string]*tensor.Dense{}
	for _, v := range []struct {
		name  string
		shape []int
	}{{"x", []int{2, 40, 96}}, {"r", []int{2, 40, 96}}, {"g", []int{96}}, {"beta", []int{96}},
		{"w1", []int{130, 96}}, {"b1", []int{130}}, {"w2", []int{96, 130}}, {"b2", []int{96}},
		{"wq", []int{288, 96}}, {"bq", []int{288}}, {"wp", []int{96, 96}}, {"bp", []int{96}}} {
		values[v.name] = uniform32(rng, -0.4, 0.4, v.shape...)
	}
	wrt := []string{"x", "g", "w1", "b1", "w2", "wq", "wp"}
	run := func(v blas.Variant, keepPacked bool) (out [][]float32, taken []bool) {
		g := gorgonia.NewGraph()
		n := map[string]*gorgonia.Node{}
		for name, d := range values {
			n[name] = gorgonia.NodeFromAny(g, d, gorgonia.WithName(name))
		}
		must := func(y *gorgonia.Node, err error) *gorgonia.Node {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			return y
		}
		x := must(LayerNorm(n["x"], n["g"], n["beta"], 1e-6))
		mlp := must(LinearAs(v, must(LinearGELUAs(v, x, n["w1"], n["b1"])), n["w2"], n["b2"]))
		att, _, err := NewAttentionAs(v, must(LinearAs(v, x, n["wq"], n["bq"])), 2, 0, nil)
		y := must(LinearAs(v, must(att, err), n["wp"], n["bp"]))
		cost := must(gorgonia.Sum(must(gorgonia.HadamardProd(must(gorgonia.Add(mlp, y)), n["r"]))))
		var of gorgonia.Nodes
		for _, name := range wrt {
			of = append(of, n[name])
		}
		grads, err := gorgonia.Grad(cost, of...)
		if err != nil {
			t.Fatal(err)
		}
		var producers []*convertedOutput
		for _, node := range g.AllNodes() {
			if p, ok := node.Op().(WeightPacker); ok && keepPacked {
				p.KeepWeightPacked()
			}
			if p, ok := node.Op().(outputConverter); ok {
				if c := p.convertOutputFor(v); c != nil {
					producers = append(producers, c)
				}
			}
		}
		if len(producers) != 3 {
			t.Fatalf("%s: %d ops convert their outputs, want LayerNorm, LinearGELU and Attention", v, len(producers))
		}
		prog, err := runner.Compile(g, append(grads, mlp, y)...)
		if err != nil {
			t.Fatal(err)
		}
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
		for _, gn := range append(grads, mlp, y) {
			out = append(out, append([]float32(nil), prog.Value(gn).Data().([]float32)...))
		}
		for _, c := range producers {
			taken = append(taken, c.from.first == nil)
		}
		return out, taken
	}
	for _, v := range blas.Variants() {
		if v.IsFP32() || !v.Runs() {
			continue
		}
		reads := v == blas.BF16 || v == blas.AMX
		kept, taken := run(v, true)
		plain, unread := run(v, false)
		for i := range taken {
			if reads && (!taken[i] || unread[i]) {
				t.Fatalf("%s: producer %d's conversion read with packed weights %v, without %v", v, i, taken[i], unread[i])
			}
		}
		for i, want := range plain {
			for j := range want {
				if math.Float32bits(kept[i][j]) != math.Float32bits(want[j]) {
					t.Fatalf("%s: value %d (%v's gradients, then the outputs) [%d] = %v read converted, %v converting", v, i, wrt, j, kept[i][j], want[j])
				}
			}
		}
	}
}
