// Package opstest checks Gorgonia ops numerically: symbolic gradients
// against central finite differences in float64, and float32 results
// against float64 ones.
package opstest

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/runner"
)

// Func applies the op (or model) under test to input nodes, one per input tensor.
type Func func(g *gorgonia.ExprGraph, inputs []*gorgonia.Node) (*gorgonia.Node, error)

// Options tunes a check. Zero values pick the defaults.
type Options struct {
	Eps        float64 // finite-difference step; default 1e-6
	Tol        float64 // allowed |analytic − numeric| / max(1, |numeric|); default 1e-6
	MaxSamples int     // elements checked per input; default 48, all when fewer
	Seed       uint64  // seed for the projection and the sampled elements
}

func (o Options) withDefaults() Options {
	if o.Eps == 0 {
		o.Eps = 1e-6
	}
	if o.Tol == 0 {
		o.Tol = 1e-6
	}
	if o.MaxSamples == 0 {
		o.MaxSamples = 48
	}
	return o
}

// Rand returns a float64 tensor of the given shape with entries uniform in [lo, hi).
func Rand(rng *rand.Rand, lo, hi float64, shape ...int) *tensor.Dense {
	d := make([]float64, tensor.Shape(shape).TotalSize())
	for i := range d {
		d[i] = lo + (hi-lo)*rng.Float64()
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
}

// built is a graph with the function applied and reduced to a scalar cost.
type built struct {
	g      *gorgonia.ExprGraph
	inputs []*gorgonia.Node
	out    *gorgonia.Node
	cost   *gorgonia.Node
}

func build(f Func, inputs []*tensor.Dense, dt tensor.Dtype, seed uint64) (*built, error) {
	g := gorgonia.NewGraph()
	b := &built{g: g}
	for i, in := range inputs {
		v := Convert(in, dt)
		n := gorgonia.NewTensor(g, dt, len(in.Shape()), gorgonia.WithShape(in.Shape()...),
			gorgonia.WithName(fmt.Sprintf("input%d", i)), gorgonia.WithValue(v))
		b.inputs = append(b.inputs, n)
	}
	out, err := f(g, b.inputs)
	if err != nil {
		return nil, err
	}
	b.out = out
	if out.IsScalar() {
		b.cost = out
		return b, nil
	}
	// A random projection makes every output element matter to the cost.
	rng := rand.New(rand.NewPCG(seed, 99))
	r := make([]float64, out.Shape().TotalSize())
	for i := range r {
		r[i] = rng.Float64()*2 - 1
	}
	b.cost, err = gorgonia.ApplyOp(&project{r: r, dims: out.Dims()}, out)
	return b, err
}

// Convert copies a float64 tensor into a new tensor of dtype dt.
func Convert(t *tensor.Dense, dt tensor.Dtype) *tensor.Dense {
	src := t.Data().([]float64)
	if dt == tensor.Float64 {
		d := append([]float64(nil), src...)
		return tensor.New(tensor.WithShape(t.Shape()...), tensor.WithBacking(d))
	}
	d := make([]float32, len(src))
	for i, v := range src {
		d[i] = float32(v)
	}
	return tensor.New(tensor.WithShape(t.Shape()...), tensor.WithBacking(d))
}

// Float64s copies a float32 or float64 value, tensor or scalar, into a new []float64.
func Float64s(v gorgonia.Value) []float64 {
	switch d := v.Data().(type) {
	case []float64:
		return append([]float64(nil), d...)
	case []float32:
		o := make([]float64, len(d))
		for i, x := range d {
			o[i] = float64(x)
		}
		return o
	case float64:
		return []float64{d}
	case float32:
		return []float64{float64(d)}
	}
	panic(fmt.Sprintf("opstest: unexpected value %T", v))
}

// GradCheck compares the symbolic gradient of f with respect to the inputs
// listed in wrt against central differences, in float64.
func GradCheck(t testing.TB, f Func, inputs []*tensor.Dense, wrt []int, opt Options) {
	t.Helper()
	opt = opt.withDefaults()
	b, err := build(f, inputs, tensor.Float64, opt.Seed)
	if err != nil {
		t.Fatalf("building graph: %v", err)
	}
	var wrtNodes gorgonia.Nodes
	for _, i := range wrt {
		wrtNodes = append(wrtNodes, b.inputs[i])
	}
	grads, err := gorgonia.Grad(b.cost, wrtNodes...)
	if err != nil {
		t.Fatalf("gorgonia.Grad: %v", err)
	}
	full, err := runner.Compile(b.g, append(grads, b.cost)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := full.Run(); err != nil {
		t.Fatal(err)
	}
	analytic := make([][]float64, len(grads))
	for i, gn := range grads {
		analytic[i] = append([]float64(nil), Float64s(full.Value(gn))...)
	}
	fwd, err := runner.Compile(b.g, b.cost)
	if err != nil {
		t.Fatal(err)
	}
	cost := func() float64 {
		if err := fwd.Run(); err != nil {
			t.Fatal(err)
		}
		return Float64s(fwd.Value(b.cost))[0]
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 7))
	for gi, idx := range wrt {
		x := b.inputs[idx].Value().Data().([]float64)
		elems := sample(rng, len(x), opt.MaxSamples)
		worst := 0.0
		for _, e := range elems {
			orig := x[e]
			x[e] = orig + opt.Eps
			fp := cost()
			x[e] = orig - opt.Eps
			fm := cost()
			x[e] = orig
			num := (fp - fm) / (2 * opt.Eps)
			got := analytic[gi][e]
			rel := math.Abs(got-num) / math.Max(1, math.Abs(num))
			worst = math.Max(worst, rel)
			if !(rel <= opt.Tol) {
				t.Errorf("input %d element %d: analytic gradient %.10g, numeric %.10g (rel err %.3g > %.3g)", idx, e, got, num, rel, opt.Tol)
				return
			}
		}
		if testing.Verbose() {
			t.Logf("input %d: %d elements checked, worst rel err %.3g", idx, len(elems), worst)
		}
	}
}

func sample(rng *rand.Rand, n, max int) []int {
	if n <= max {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	return rng.Perm(n)[:max]
}

// Result holds an op's output and input gradients, as float64.
type Result struct {
	Out   []float64
	Grads [][]float64
}

// Eval runs f and its gradients with respect to wrt in dtype dt.
func Eval(f Func, inputs []*tensor.Dense, wrt []int, dt tensor.Dtype, seed uint64) (Result, error) {
	b, err := build(f, inputs, dt, seed)
	if err != nil {
		return Result{}, err
	}
	var wrtNodes gorgonia.Nodes
	for _, i := range wrt {
		wrtNodes = append(wrtNodes, b.inputs[i])
	}
	var grads gorgonia.Nodes
	if len(wrtNodes) > 0 {
		if grads, err = gorgonia.Grad(b.cost, wrtNodes...); err != nil {
			return Result{}, err
		}
	}
	p, err := runner.Compile(b.g, append(grads, b.out)...)
	if err != nil {
		return Result{}, err
	}
	if err := p.Run(); err != nil {
		return Result{}, err
	}
	r := Result{Out: append([]float64(nil), Float64s(p.Value(b.out))...)}
	for _, gn := range grads {
		r.Grads = append(r.Grads, append([]float64(nil), Float64s(p.Value(gn))...))
	}
	return r, nil
}

// AgreeF32 checks that f in float32 matches f in float64, outputs and
// gradients, within tol relative to the largest magnitude of each tensor.
func AgreeF32(t testing.TB, f Func, inputs []*tensor.Dense, wrt []int, tol float64) {
	t.Helper()
	r64, err := Eval(f, inputs, wrt, tensor.Float64, 1)
	if err != nil {
		t.Fatalf("float64: %v", err)
	}
	r32, err := Eval(f, inputs, wrt, tensor.Float32, 1)
	if err != nil {
		t.Fatalf("float32: %v", err)
	}
	compare := func(what string, a, b []float64) {
		scale := 1e-30
		for _, v := range a {
			scale = math.Max(scale, math.Abs(v))
		}
		for i := range a {
			if d := math.Abs(a[i]-b[i]) / scale; !(d <= tol) {
				t.Errorf("%s[%d]: float64 %.8g, float32 %.8g (rel %.3g > %.3g)", what, i, a[i], b[i], d, tol)
				return
			}
		}
	}
	compare("output", r64.Out, r32.Out)
	for i := range r64.Grads {
		compare(fmt.Sprintf("grad %d", wrt[i]), r64.Grads[i], r32.Grads[i])
	}
}

// project reduces y to Σ r⊙y, a scalar.
type project struct {
	r    []float64
	dims int
}

func (p *project) Arity() int            { return 1 }
func (p *project) ReturnsPtr() bool      { return false }
func (p *project) CallsExtern() bool     { return false }
func (p *project) OverwritesInput() int  { return -1 }
func (p *project) String() string        { return "Project" }
func (p *project) WriteHash(h hash.Hash) { fmt.Fprintf(h, "Project%p", p) }
func (p *project) Hashcode() uint32 {
	h := fnv.New32a()
	p.WriteHash(h)
	return h.Sum32()
}
func (p *project) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(gorgonia.TensorType{Dims: p.dims, Of: a}, a)
}
func (p *project) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}
func (p *project) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	var s float64
	for i, v := range Float64s(in[0]) {
		s += p.r[i] * v
	}
	if in[0].Dtype() == tensor.Float32 {
		v := gorgonia.F32(s)
		return &v, nil
	}
	v := gorgonia.F64(s)
	return &v, nil
}
func (p *project) DiffWRT(int) []bool { return []bool{true} }
func (p *project) SymDiff(inputs gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	n, err := gorgonia.ApplyOp(&projectGrad{p: p, shape: inputs[0].Shape()}, grad)
	return gorgonia.Nodes{n}, err
}

// projectGrad is r·ds, shaped like y.
type projectGrad struct {
	p     *project
	shape tensor.Shape
}

func (p *projectGrad) Arity() int            { return 1 }
func (p *projectGrad) ReturnsPtr() bool      { return false }
func (p *projectGrad) CallsExtern() bool     { return false }
func (p *projectGrad) OverwritesInput() int  { return -1 }
func (p *projectGrad) String() string        { return "ProjectGrad" }
func (p *projectGrad) WriteHash(h hash.Hash) { fmt.Fprintf(h, "ProjectGrad%p", p) }
func (p *projectGrad) Hashcode() uint32 {
	h := fnv.New32a()
	p.WriteHash(h)
	return h.Sum32()
}
func (p *projectGrad) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, gorgonia.TensorType{Dims: len(p.shape), Of: a})
}
func (p *projectGrad) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return p.shape.Clone(), nil
}
func (p *projectGrad) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	ds := Float64s(in[0])[0]
	if in[0].Dtype() == tensor.Float32 {
		d := make([]float32, len(p.p.r))
		for i, r := range p.p.r {
			d[i] = float32(r * ds)
		}
		return tensor.New(tensor.WithShape(p.shape...), tensor.WithBacking(d)), nil
	}
	d := make([]float64, len(p.p.r))
	for i, r := range p.p.r {
		d[i] = r * ds
	}
	return tensor.New(tensor.WithShape(p.shape...), tensor.WithBacking(d)), nil
}
