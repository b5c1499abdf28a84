package ops_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
	"github.com/vit-train/vit-train/nn/runner"
)

// maskFunc applies Dropout (or DropPath) with a Randomness of its own, so
// every graph it builds draws the same masks.
func maskFunc(drop func(*gorgonia.Node, float64, *ops.Randomness) (*gorgonia.Node, error), p float64, seed, step uint64) opstest.Func {
	return func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		r := ops.NewRandomness(seed)
		r.SetStep(step)
		return drop(in[0], p, r)
	}
}

func TestDropoutGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, shape := range [][]int{{13}, {4, 6}, {2, 3, 4}} {
		inputs := []*tensor.Dense{opstest.Rand(rng, -1, 1, shape...)}
		f := maskFunc(ops.Dropout, 0.4, 1, 2)
		opstest.GradCheck(t, f, inputs, []int{0}, opstest.Options{})
		opstest.AgreeF32(t, f, inputs, []int{0}, 1e-7)
	}
}

// TestDropoutMask checks that every element is either 0 or x/(1−p), that
// about 1−p of them are kept, and that the backward applies the same mask.
func TestDropoutMask(t *testing.T) {
	const n, p = 200000, 0.3
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		scale := 1 / (1 - p)
		if dt == tensor.Float32 {
			scale = float64(float32(scale))
		}
		y, grads := fusedEval(t, maskFunc(ops.Dropout, p, 5, 0), []*tensor.Dense{filled(1, n)}, filled(1, n), []int{0}, dt)
		kept := 0
		for i, v := range y {
			if v != 0 && v != scale {
				t.Fatalf("%v: y[%d] = %g, want 0 or %g", dt, i, v, scale)
			}
			if v != 0 {
				kept++
			}
		}
		// Binomial(n, 0.7): standard deviation ≈ 205, so 1% is about 10σ.
		if frac := float64(kept) / n; math.Abs(frac-(1-p)) > 0.01 {
			t.Errorf("%v: kept fraction %.4f, want %.2f", dt, frac, 1-p)
		}
		if !slices.Equal(grads[0], y) {
			t.Errorf("%v: the backward mask differs from the forward one", dt)
		}
	}
}

// dropoutOnce builds a fresh graph with one Dropout of ones, runs it at the
// given step and returns the output.
func dropoutOnce(t *testing.T, seed, step uint64, shape ...int) []float64 {
	t.Helper()
	y, _ := fusedEval(t, maskFunc(ops.Dropout, 0.5, seed, step), []*tensor.Dense{filled(1, shape...)}, nil, nil, tensor.Float32)
	return y
}

func TestDropoutMasksDependOnSeedStreamAndStepOnly(t *testing.T) {
	a := dropoutOnce(t, 1, 10, 256, 512)
	if b := dropoutOnce(t, 1, 10, 256, 512); !slices.Equal(a, b) {
		t.Error("same seed and step gave different masks")
	}
	if b := dropoutOnce(t, 1, 11, 256, 512); slices.Equal(a, b) {
		t.Error("the next step gave the same mask")
	}
	if b := dropoutOnce(t, 2, 10, 256, 512); slices.Equal(a, b) {
		t.Error("another seed gave the same mask")
	}
	// The split over workers does not matter.
	old := runtime.GOMAXPROCS(1)
	b := dropoutOnce(t, 1, 10, 256, 512)
	runtime.GOMAXPROCS(old)
	if !slices.Equal(a, b) {
		t.Error("one worker drew another mask than several")
	}
}

// TestDropoutResumes runs a graph over steps 0…5 and checks that a new graph
// whose Randomness starts at step 5 draws the same masks at step 5.
func TestDropoutResumes(t *testing.T) {
	build := func(r *ops.Randomness) (*runner.Program, *gorgonia.Node, *gorgonia.Node) {
		g := gorgonia.NewGraph()
		x := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(32, 32), gorgonia.WithName("x"),
			gorgonia.WithValue(opstest.Convert(filled(1, 32, 32), tensor.Float32)))
		a, err := ops.Dropout(x, 0.25, r)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ops.Dropout(x, 0.25, r)
		if err != nil {
			t.Fatal(err)
		}
		p, err := runner.Compile(g, a, b)
		if err != nil {
			t.Fatal(err)
		}
		return p, a, b
	}
	r := ops.NewRandomness(42)
	p, a, b := build(r)
	var wantA, wantB []float64
	for step := uint64(0); step <= 5; step++ {
		r.SetStep(step)
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		wantA, wantB = opstest.Float64s(p.Value(a)), opstest.Float64s(p.Value(b))
	}
	if slices.Equal(wantA, wantB) {
		t.Fatal("two Dropouts of one input drew the same mask")
	}
	if a == b {
		t.Fatal("two Dropouts of one input were merged into one node")
	}

	r2 := ops.NewRandomness(42)
	r2.SetStep(5)
	p2, a2, b2 := build(r2)
	if err := p2.Run(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(opstest.Float64s(p2.Value(a2)), wantA) || !slices.Equal(opstest.Float64s(p2.Value(b2)), wantB) {
		t.Error("a graph resumed at step 5 drew other masks than the original run at step 5")
	}
	if r2.Seed() != 42 || r2.Step() != 5 || r2.Streams() != 2 {
		t.Errorf("seed %d, step %d, streams %d; want 42, 5, 2", r2.Seed(), r2.Step(), r2.Streams())
	}
}

// TestDropoutBackwardAlone runs only the backward node, before any forward
// pass: it must draw the mask the forward pass draws.
func TestDropoutBackwardAlone(t *testing.T) {
	for _, drop := range []func(*gorgonia.Node, float64, *ops.Randomness) (*gorgonia.Node, error){ops.Dropout, ops.DropPath} {
		g := gorgonia.NewGraph()
		x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(16, 8), gorgonia.WithName("x"), gorgonia.WithValue(filled(1, 16, 8)))
		dy := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(16, 8), gorgonia.WithName("dy"), gorgonia.WithValue(filled(1, 16, 8)))
		r := ops.NewRandomness(3)
		r.SetStep(7)
		y, err := drop(x, 0.5, r)
		if err != nil {
			t.Fatal(err)
		}
		grads, err := gorgonia.Backpropagate(gorgonia.Nodes{y}, gorgonia.Nodes{dy}, gorgonia.Nodes{x})
		if err != nil {
			t.Fatal(err)
		}
		back, err := runner.Compile(g, grads[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := back.Run(); err != nil {
			t.Fatal(err)
		}
		dx := opstest.Float64s(back.Value(grads[0]))
		fwd, err := runner.Compile(g, y)
		if err != nil {
			t.Fatal(err)
		}
		if err := fwd.Run(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(dx, opstest.Float64s(fwd.Value(y))) {
			t.Errorf("%v: backward run alone used another mask than the forward", y.Op())
		}
	}
}

func TestDropoutZeroIsIdentityAndBadInputsFail(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("x"))
	r := ops.NewRandomness(1)
	for _, drop := range []func(*gorgonia.Node, float64, *ops.Randomness) (*gorgonia.Node, error){ops.Dropout, ops.DropPath} {
		if y, err := drop(x, 0, r); err != nil || y != x {
			t.Errorf("p = 0: got %v, %v; want x itself", y, err)
		}
		for _, p := range []float64{1, -0.1, 1.5, math.NaN()} {
			if _, err := drop(x, p, r); err == nil {
				t.Errorf("p = %v: expected an error", p)
			}
		}
		if _, err := drop(x, 0.5, nil); err == nil {
			t.Error("nil Randomness: expected an error")
		}
	}
	if r.Streams() != 0 {
		t.Errorf("failed and p = 0 calls took %d streams", r.Streams())
	}
}

// BenchmarkDropout is forward and backward of Dropout(0.1) over ViT-B
// tokens (64·65 × 768) in float32, a new mask every run.
func BenchmarkDropout(b *testing.B) {
	r := ops.NewRandomness(1)
	f := func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		return ops.Dropout(in[0], 0.1, r)
	}
	fg := buildFused(b, f, []*tensor.Dense{filled(1, 64*65, 768)}, filled(0.5, 64*65, 768), []int{0}, tensor.Float32)
	n := 64 * 65 * 768
	b.SetBytes(int64(4 * n))
	step := uint64(0)
	for b.Loop() {
		step++
		r.SetStep(step)
		if err := fg.prog.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
}
