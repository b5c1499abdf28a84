package resnet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/internal/gradcheck"
	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/runner"
)

// lossGraph is a model's graph with a cross-entropy loss on fixed inputs.
type lossGraph struct {
	g             *gorgonia.ExprGraph
	logits, loss  *gorgonia.Node
	params, grads []*gorgonia.Node
	images        *tensor.Dense
}

// newLossGraph builds m on images (B, C, H, W) with one-hot targets for
// labels, and the gradients of the mean cross-entropy.
func newLossGraph(t *testing.T, m *Model, images *tensor.Dense, labels []int, training bool) *lossGraph {
	t.Helper()
	dt := m.dtype()
	s := images.Shape()
	k := m.cfg.NumClasses
	targets := tensor.New(tensor.Of(dt), tensor.WithShape(s[0], k))
	for i, l := range labels {
		if err := targets.SetAt(oneOf(dt), i, l); err != nil {
			t.Fatal(err)
		}
	}
	lg := &lossGraph{g: gorgonia.NewGraph(), images: images}
	x := gorgonia.NewTensor(lg.g, dt, 4, gorgonia.WithShape(s...), gorgonia.WithName("x"), gorgonia.WithValue(images))
	y := gorgonia.NewMatrix(lg.g, dt, gorgonia.WithShape(s[0], k), gorgonia.WithName("targets"), gorgonia.WithValue(targets))
	var err error
	if lg.logits, err = m.Build(lg.g, x, training); err != nil {
		t.Fatal(err)
	}
	if lg.loss, err = ops.SoftTargetCrossEntropy(lg.logits, y); err != nil {
		t.Fatal(err)
	}
	if lg.params, err = m.ParamNodes(lg.g); err != nil {
		t.Fatal(err)
	}
	if lg.grads, err = gorgonia.Grad(lg.loss, lg.params...); err != nil {
		t.Fatal(err)
	}
	return lg
}

// newFloat64 builds cfg's model as New does, its parameters converted to
// float64 (the batch-norm statistics stay float32): its graphs are
// float64, for finite differences finer than float32 resolves.
func newFloat64(cfg BuildConfig, seed uint64) (*Model, error) {
	m, err := New(cfg, seed)
	if err != nil {
		return nil, err
	}
	for i, p := range m.params {
		m.params[i].Value = gradcheck.Float64(p.Value)
	}
	return m, nil
}

func oneOf(dt tensor.Dtype) any {
	if dt == tensor.Float64 {
		return 1.0
	}
	return float32(1)
}

// compile plans outputs as nn.Graph and nn.Step do, with ops' own Adds in
// place of Gorgonia's.
func compile(t *testing.T, g *gorgonia.ExprGraph, outputs ...*gorgonia.Node) *runner.Program {
	t.Helper()
	p, err := runner.Compile(g, outputs...)
	if err != nil {
		t.Fatal(err)
	}
	p.Substitute(g, ops.NativeOp)
	return p
}

func run(t *testing.T, p *runner.Program) {
	t.Helper()
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
}

func scalar(v gorgonia.Value) float64 {
	switch d := v.Data().(type) {
	case float64:
		return d
	case float32:
		return float64(d)
	case []float64:
		return d[0]
	case []float32:
		return float64(d[0])
	}
	panic(fmt.Sprintf("not a scalar: %T", v))
}

func randImages(rng *rand.Rand, dt tensor.Dtype, shape ...int) *tensor.Dense {
	n := tensor.Shape(shape).TotalSize()
	if dt == tensor.Float64 {
		d := make([]float64, n)
		for i := range d {
			d[i] = rng.NormFloat64()
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
	}
	d := make([]float32, n)
	for i := range d {
		d[i] = float32(rng.NormFloat64())
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
}

func TestResNet20GradientMatchesFiniteDifferences(t *testing.T) {
	m, err := newFloat64(BuildConfig{Arch: "resnet20", ImageSize: 8, NumClasses: 3}, 5)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	lg := newLossGraph(t, m, randImages(rng, tensor.Float64, 2, 3, 8, 8), []int{0, 2}, true)
	full := compile(t, lg.g, append(lg.grads, lg.loss)...)
	run(t, full)
	fwd := compile(t, lg.g, lg.loss)
	loss := func() float64 {
		run(t, fwd)
		return scalar(fwd.Value(lg.loss))
	}
	const eps = 1e-6
	checked := map[string]bool{
		"conv1.weight": true, "layer1.0.bn1.weight": true, "layer2.0.downsample.0.weight": true,
		"layer3.0.downsample.1.bias": true, "layer3.2.conv2.weight": true, "fc.weight": true, "fc.bias": true,
	}
	for i, p := range m.Params() {
		if !checked[p.Name] {
			continue
		}
		delete(checked, p.Name)
		analytic := append([]float64(nil), full.Value(lg.grads[i]).Data().([]float64)...)
		w := p.Value.Data().([]float64)
		for _, e := range rng.Perm(len(w))[:min(len(w), 6)] {
			num := gradcheck.CentralDifference(loss, w, e, eps)
			if d := math.Abs(analytic[e] - num); d > 1e-7+1e-5*math.Abs(num) {
				t.Errorf("%s[%d]: analytic %.10g, numeric %.10g", p.Name, e, analytic[e], num)
			}
		}
	}
	if len(checked) != 0 {
		t.Fatalf("parameters not found: %v", checked)
	}
}

func TestEveryParameterGetsAGradient(t *testing.T) {
	m, err := New(BuildConfig{Arch: "resnet20", Channels: 1, ImageSize: 8, NumClasses: 4}, 6)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	lg := newLossGraph(t, m, randImages(rng, tensor.Float32, 4, 1, 8, 8), []int{0, 1, 2, 3}, true)
	p := compile(t, lg.g, lg.grads...)
	run(t, p)
	for i, param := range m.Params() {
		nonzero := false
		for _, v := range p.Value(lg.grads[i]).Data().([]float32) {
			if v != 0 {
				nonzero = true
				break
			}
		}
		if !nonzero {
			t.Errorf("%s: gradient is all zero", param.Name)
		}
	}
}

// logitsProgram builds m on images and compiles the logits.
func logitsProgram(t *testing.T, m *Model, images *tensor.Dense, training bool) (*runner.Program, *gorgonia.Node) {
	t.Helper()
	g := gorgonia.NewGraph()
	x := gorgonia.NewTensor(g, m.dtype(), 4, gorgonia.WithShape(images.Shape()...), gorgonia.WithName("x"), gorgonia.WithValue(images))
	logits, err := m.Build(g, x, training)
	if err != nil {
		t.Fatal(err)
	}
	return compile(t, g, logits), logits
}

func snapshot(ps []Param) [][]float32 {
	out := make([][]float32, len(ps))
	for i, p := range ps {
		out[i] = append([]float32(nil), p.Value.Data().([]float32)...)
	}
	return out
}

func maxDiff(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

func TestTrainAndEvalBatchNorm(t *testing.T) {
	m, err := newFloat64(BuildConfig{Arch: "resnet20", ImageSize: 8, NumClasses: 5}, 7)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	images := randImages(rng, tensor.Float64, 4, 3, 8, 8)
	train, trainOut := logitsProgram(t, m, images, true)
	eval, evalOut := logitsProgram(t, m, images, false)
	logits := func(p *runner.Program, n *gorgonia.Node) []float64 {
		run(t, p)
		return append([]float64(nil), p.Value(n).Data().([]float64)...)
	}

	// Eval leaves the running statistics alone; training moves them.
	before := snapshot(m.Buffers())
	e0 := logits(eval, evalOut)
	if maxDiff64(before, snapshot(m.Buffers())) != 0 {
		t.Fatal("an eval run changed the running statistics")
	}
	t0 := logits(train, trainOut)
	if maxDiff64(before, snapshot(m.Buffers())) == 0 {
		t.Fatal("a training run left the running statistics unchanged")
	}
	if st := m.bns["layer2.0.downsample.1"]; st.NumBatchesTracked != 1 {
		t.Fatalf("num_batches_tracked = %d after one training run", st.NumBatchesTracked)
	}
	if d := maxDiff(e0, t0); d < 1e-3 {
		t.Fatalf("train and eval logits agree to %g: batch statistics unused?", d)
	}

	// In eval mode a sample's logits do not depend on the rest of the batch;
	// in training mode they do.
	t1 := logits(train, trainOut)
	e1 := logits(eval, evalOut)
	if d := maxDiff(e0, e1); d < 1e-9 {
		t.Fatalf("eval logits did not follow the updated running statistics (%g)", d)
	}
	d := images.Data().([]float64)
	for i := len(d) / 4; i < len(d); i++ {
		d[i] += 1 // change every sample but the first
	}
	e2, t2 := logits(eval, evalOut), logits(train, trainOut)
	k := m.cfg.NumClasses
	// e1 and e2 are computed from the same running statistics (eval runs do not update them).
	if dd := maxDiff(e1[:k], e2[:k]); dd > 1e-12 {
		t.Errorf("eval logits of sample 0 changed by %g when the other samples changed", dd)
	}
	if dd := maxDiff(t1[:k], t2[:k]); dd < 1e-6 {
		t.Errorf("training logits of sample 0 ignored the other samples (%g)", dd)
	}
}

func maxDiff64(a, b [][]float32) float64 {
	d := 0.0
	for i := range a {
		for j := range a[i] {
			d = math.Max(d, math.Abs(float64(a[i][j]-b[i][j])))
		}
	}
	return d
}

// halves returns n grey 8×8 images whose left (label 0) or right (label 1)
// half is bright, with noise.
func halves(rng *rand.Rand, n int) (*tensor.Dense, []int) {
	d := make([]float32, n*64)
	labels := make([]int, n)
	for i := range n {
		labels[i] = i % 2
		for y := range 8 {
			for x := range 8 {
				v := float32(rng.NormFloat64() * 0.3)
				if (x < 4) == (labels[i] == 0) {
					v += 1
				}
				d[i*64+y*8+x] = v
			}
		}
	}
	return tensor.New(tensor.WithShape(n, 1, 8, 8), tensor.WithBacking(d)), labels
}

func TestSGDReducesLoss(t *testing.T) {
	m, err := New(BuildConfig{Arch: "resnet20", Channels: 1, ImageSize: 8, NumClasses: 2}, 8)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	images, labels := halves(rng, 16)
	lg := newLossGraph(t, m, images, labels, true)
	step := compile(t, lg.g, append(lg.grads, lg.loss)...)
	const lr = 0.05
	var losses []float64
	for range 12 {
		run(t, step)
		losses = append(losses, scalar(step.Value(lg.loss)))
		for i, p := range m.Params() {
			w, g := p.Value.Data().([]float32), step.Value(lg.grads[i]).Data().([]float32)
			for j := range w {
				w[j] -= lr * g[j]
			}
		}
	}
	t.Logf("losses: %.4f", losses)
	if first, last := losses[0], losses[len(losses)-1]; !(last < 0.5*first) {
		t.Fatalf("loss went from %.4f to %.4f", first, last)
	}
}

func TestBuildSharesParametersAcrossGraphs(t *testing.T) {
	m, err := New(BuildConfig{Arch: "resnet20", ImageSize: 8, NumClasses: 2}, 9)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	images := randImages(rng, tensor.Float32, 2, 3, 8, 8)
	p1, out1 := logitsProgram(t, m, images, false)
	run(t, p1)
	before := append([]float32(nil), p1.Value(out1).Data().([]float32)...)
	// Doubling fc.bias in the model shows in a graph built before the change.
	fcBias := m.Params()[len(m.Params())-1]
	for i := range fcBias.Value.Data().([]float32) {
		fcBias.Value.Data().([]float32)[i] += 1
	}
	run(t, p1)
	after := p1.Value(out1).Data().([]float32)
	for i := range before {
		if math.Abs(float64(after[i]-before[i]-1)) > 1e-5 {
			t.Fatalf("logit %d went from %v to %v after adding 1 to fc.bias", i, before[i], after[i])
		}
	}
}

func TestBuildRejectsBadInput(t *testing.T) {
	m, err := New(BuildConfig{Arch: "resnet20", ImageSize: 8, NumClasses: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	g := gorgonia.NewGraph()
	for _, x := range []*gorgonia.Node{
		gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(2, 1, 8, 8), gorgonia.WithName("grey")),
		gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(2, 3, 16, 16), gorgonia.WithName("big")),
		gorgonia.NewTensor(g, tensor.Float64, 4, gorgonia.WithShape(2, 3, 8, 8), gorgonia.WithName("f64")),
		gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 192), gorgonia.WithName("flat")),
	} {
		if _, err := m.Build(g, x, true); err == nil {
			t.Errorf("input %s %v: expected an error", x.Name(), x.Shape())
		}
	}
	if _, err := m.ParamNodes(gorgonia.NewGraph()); err == nil {
		t.Error("ParamNodes on a graph without the model: expected an error")
	}
}

func TestLogitShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct {
		cfg   BuildConfig
		batch int
		size  int
	}{
		{BuildConfig{Arch: "resnet20", Channels: 1, ImageSize: 28, NumClasses: 10}, 2, 28},
		{BuildConfig{Arch: "resnet56", ImageSize: 32, NumClasses: 100}, 1, 32},
		{BuildConfig{Arch: "resnet18", NumClasses: 1000}, 2, 32},
		{BuildConfig{Arch: "resnet50", NumClasses: 1000}, 1, 32},
	} {
		m := readOnlyModel(t, tc.cfg) // eval mode leaves the model as it is
		images := randImages(rng, tensor.Float32, tc.batch, m.cfg.Channels, tc.size, tc.size)
		p, out := logitsProgram(t, m, images, false)
		run(t, p)
		v := p.Value(out)
		if want := (tensor.Shape{tc.batch, tc.cfg.NumClasses}); !v.Shape().Eq(want) {
			t.Errorf("%s: logits %v, want %v", tc.cfg.Arch, v.Shape(), want)
		}
		for _, x := range v.Data().([]float32) {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("%s: logit %v", tc.cfg.Arch, x)
			}
		}
	}
}
