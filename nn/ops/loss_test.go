package ops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
)

func softTargetFunc(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
	return ops.SoftTargetCrossEntropy(in[0], in[1])
}

func distillKLFunc(tau float64, perBatch bool) opstest.Func {
	return func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		return ops.DistillKL(in[0], in[1], tau, perBatch)
	}
}

func hardDistillFunc(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
	return ops.HardDistillCE(in[0], in[1])
}

// randomTargets returns (b, c) rows of positive weights summing to 1.
func randomTargets(rng *rand.Rand, b, c int) *tensor.Dense {
	t := opstest.Rand(rng, 0.01, 1, b, c)
	d := t.Data().([]float64)
	for r := range b {
		s := 0.0
		for _, v := range d[r*c : (r+1)*c] {
			s += v
		}
		for j := range c {
			d[r*c+j] /= s
		}
	}
	return t
}

func TestLossGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, bc := range [][2]int{{1, 2}, {3, 5}, {4, 10}} {
		b, c := bc[0], bc[1]
		logits := opstest.Rand(rng, -3, 3, b, c)
		for _, tc := range []struct {
			name    string
			f       opstest.Func
			targets *tensor.Dense
		}{
			{"SoftTargetCrossEntropy", softTargetFunc, randomTargets(rng, b, c)},
			{"SoftTargetCrossEntropy unnormalized targets", softTargetFunc, opstest.Rand(rng, 0, 1, b, c)},
			{"DistillKL", distillKLFunc(3, false), opstest.Rand(rng, -3, 3, b, c)},
			{"DistillKL perBatch", distillKLFunc(0.5, true), opstest.Rand(rng, -3, 3, b, c)},
			{"HardDistillCE", hardDistillFunc, opstest.Rand(rng, -3, 3, b, c)},
		} {
			t.Run(fmt.Sprintf("%s %dx%d", tc.name, b, c), func(t *testing.T) {
				inputs := []*tensor.Dense{logits, tc.targets}
				opstest.GradCheck(t, tc.f, inputs, []int{0}, opstest.Options{})
				opstest.AgreeF32(t, tc.f, inputs, []int{0}, 2e-6)
			})
		}
	}
}

func TestSoftTargetCrossEntropyValues(t *testing.T) {
	z := []float64{1, 2, 3, 0, 0, 0}
	tg := []float64{0, 0, 1, 0.5, 0.25, 0.25}
	lse0 := math.Log(math.Exp(1) + math.Exp(2) + math.Exp(3))
	want := ((lse0 - 3) + math.Log(3)) / 2
	// ∂/∂z = (softmax(z) − t)/B.
	wantGrad := []float64{
		math.Exp(1-lse0) / 2, math.Exp(2-lse0) / 2, (math.Exp(3-lse0) - 1) / 2,
		(1.0/3 - 0.5) / 2, (1.0/3 - 0.25) / 2, (1.0/3 - 0.25) / 2,
	}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		tol := 1e-15
		if dt == tensor.Float32 {
			tol = 1e-7
		}
		got, grads := fusedEval(t, softTargetFunc, []*tensor.Dense{dense(z, 2, 3), dense(tg, 2, 3)}, nil, []int{0}, dt)
		assertClose(t, dt.String()+" loss", got, []float64{want}, tol)
		assertClose(t, dt.String()+" grad", grads[0], wantGrad, tol)
	}
}

func TestDistillKLValues(t *testing.T) {
	const tau = 2.0
	s := []float64{1, 2, 3, 0, 1, 0}
	tc := []float64{3, 2, 1, 0, 0, 2}
	// KL(q ‖ p) = Σ q·log(q/p), q = softmax(t/τ), p = softmax(s/τ), per row.
	kl := 0.0
	var wantGrad []float64
	for r := range 2 {
		var zs, zt float64
		for j := range 3 {
			zs += math.Exp(s[3*r+j] / tau)
			zt += math.Exp(tc[3*r+j] / tau)
		}
		for j := range 3 {
			p, q := math.Exp(s[3*r+j]/tau)/zs, math.Exp(tc[3*r+j]/tau)/zt
			kl += q * math.Log(q/p)
			wantGrad = append(wantGrad, tau*(p-q)) // ∂(τ²·KL)/∂s
		}
	}
	for _, perBatch := range []bool{false, true} {
		n := 6.0 // B·C, as deit divides by outputs_kd.numel()
		if perBatch {
			n = 2
		}
		grad := make([]float64, len(wantGrad))
		for i, g := range wantGrad {
			grad[i] = g / n
		}
		got, grads := fusedEval(t, distillKLFunc(tau, perBatch), []*tensor.Dense{dense(s, 2, 3), dense(tc, 2, 3)}, nil, []int{0}, tensor.Float64)
		assertClose(t, "loss", got, []float64{kl * tau * tau / n}, 1e-15)
		assertClose(t, "grad", grads[0], grad, 1e-15)
	}
	// Identical logits: zero loss, zero gradient.
	got, grads := fusedEval(t, distillKLFunc(tau, false), []*tensor.Dense{dense(s, 2, 3), dense(s, 2, 3)}, nil, []int{0}, tensor.Float32)
	assertClose(t, "loss of identical logits", got, []float64{0}, 1e-7)
	assertClose(t, "grad of identical logits", grads[0], make([]float64, 6), 1e-7)
}

func TestHardDistillCEValues(t *testing.T) {
	s := []float64{1, 2, 3, 0.5, 0, 0}
	teacher := []float64{0, 5, 1, 2, 2, 1} // argmax 1, then 0 (first of a tie)
	lse0 := math.Log(math.Exp(1) + math.Exp(2) + math.Exp(3))
	lse1 := math.Log(math.Exp(0.5) + 2)
	want := ((lse0 - 2) + (lse1 - 0.5)) / 2
	wantGrad := []float64{
		math.Exp(1-lse0) / 2, (math.Exp(2-lse0) - 1) / 2, math.Exp(3-lse0) / 2,
		(math.Exp(0.5-lse1) - 1) / 2, math.Exp(-lse1) / 2, math.Exp(-lse1) / 2,
	}
	got, grads := fusedEval(t, hardDistillFunc, []*tensor.Dense{dense(s, 2, 3), dense(teacher, 2, 3)}, nil, []int{0}, tensor.Float64)
	assertClose(t, "loss", got, []float64{want}, 1e-15)
	assertClose(t, "grad", grads[0], wantGrad, 1e-15)
}

func TestLossesOnHugeLogits(t *testing.T) {
	z := dense([]float64{1000, -1000, -1000, 1000}, 2, 2)
	tg := dense([]float64{1, 0, 1, 0}, 2, 2)
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		got, grads := fusedEval(t, softTargetFunc, []*tensor.Dense{z, tg}, nil, []int{0}, dt)
		assertClose(t, "CE", got, []float64{1000}, 1e-12) // (0 + 2000)/2
		assertClose(t, "CE grad", grads[0], []float64{0, 0, -0.5, 0.5}, 1e-12)
		got, _ = fusedEval(t, hardDistillFunc, []*tensor.Dense{z, z}, nil, []int{0}, dt)
		assertClose(t, "hard", got, []float64{0}, 1e-12)
		got, _ = fusedEval(t, distillKLFunc(1, true), []*tensor.Dense{z, tg}, nil, []int{0}, dt)
		if math.IsNaN(got[0]) || math.IsInf(got[0], 0) {
			t.Errorf("%v: DistillKL on huge logits = %v", dt, got[0])
		}
	}
}

func TestLossesHaveNoTargetGradient(t *testing.T) {
	for name, f := range map[string]opstest.Func{
		"SoftTargetCrossEntropy": softTargetFunc, "DistillKL": distillKLFunc(1, false), "HardDistillCE": hardDistillFunc,
	} {
		g := gorgonia.NewGraph()
		z := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("z"))
		tg := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("t"))
		loss, err := f(g, []*gorgonia.Node{z, tg})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gorgonia.Grad(loss, tg); err == nil {
			t.Errorf("%s: differentiating with respect to the targets succeeded", name)
		}
	}
}

func TestLossesRejectBadInputs(t *testing.T) {
	g := gorgonia.NewGraph()
	z := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("z"))
	other := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 4), gorgonia.WithName("other"))
	v := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("v"))
	if _, err := ops.SoftTargetCrossEntropy(z, other); err == nil {
		t.Error("SoftTargetCrossEntropy: (2, 3) against (2, 4) accepted")
	}
	if _, err := ops.HardDistillCE(v, v); err == nil {
		t.Error("HardDistillCE: vectors accepted")
	}
	for _, tau := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := ops.DistillKL(z, z, tau, false); err == nil {
			t.Errorf("DistillKL: temperature %v accepted", tau)
		}
	}
}
