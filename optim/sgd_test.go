package optim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refSGD is torch.optim.SGD (dampening 0) written out in float64 for one
// tensor.
type refSGD struct {
	mom      float64
	nesterov bool
	buf      []float64
}

func (r *refSGD) step(p, g []float64, lr, wd float64) {
	for i := range p {
		d := g[i] + wd*p[i]
		if r.mom != 0 {
			if r.buf == nil {
				r.buf = make([]float64, len(p))
			}
			r.buf[i] = r.mom*r.buf[i] + d // buf starts at 0, so step 1 gives buf = d
			if r.nesterov {
				d += r.mom * r.buf[i]
			} else {
				d = r.buf[i]
			}
		}
		p[i] -= lr * d
	}
}

func TestSGDHandComputed(t *testing.T) {
	// p=1, g=0.5, lr=0.1, wd=0.1, μ=0.9.
	// Step 1: d = 0.6, b = 0.6; Nesterov d = 0.6+0.54 = 1.14 → p = 0.886,
	// plain d = 0.6 → p = 0.94.
	// Step 2 (g=0.5 again), Nesterov: d = 0.5+0.0886 = 0.5886,
	// b = 0.54+0.5886 = 1.1286, d = 0.5886+1.01574 = 1.60434 → p = 0.725566.
	for _, tc := range []struct {
		nesterov bool
		want     []float64
	}{
		{true, []float64{0.886, 0.725566}},
		{false, []float64{0.94, 0.94 - 0.1*(0.54+0.5+0.094)}},
	} {
		p := Param{Name: "w", Shape: []int{1}, Data: []float32{1}}
		o, err := NewSGD([]Param{p}, nil, SGDConfig{Momentum: 0.9, Nesterov: tc.nesterov, WeightDecay: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range tc.want {
			if err := o.Step(0.1, [][]float32{{0.5}}); err != nil {
				t.Fatal(err)
			}
			if math.Abs(float64(p.Data[0])-want) > 1e-6 {
				t.Errorf("nesterov=%v step %d: p = %.9g, want %.9g", tc.nesterov, i+1, p.Data[0], want)
			}
		}
	}
}

func TestSGDMatchesReferenceOverThreeSteps(t *testing.T) {
	for _, cfg := range []SGDConfig{
		{},
		{WeightDecay: 1e-2},
		{Momentum: 0.9, WeightDecay: 1e-2},
		{Momentum: 0.8, Nesterov: true, WeightDecay: 1e-2},
	} {
		rng := rand.New(rand.NewPCG(3, 4))
		params := bigParams(rng)
		groups := WeightDecayGroups(params, cfg.WeightDecay, nil)
		groups[0].LRScale = 0.25
		o, err := NewSGD(params, groups, cfg)
		if err != nil {
			t.Fatal(err)
		}
		hp, _ := resolveGroups(params, groups, 0)
		want := snapshot(params)
		refs := make([]refSGD, len(params))
		for i := range refs {
			refs[i] = refSGD{mom: cfg.Momentum, nesterov: cfg.Nesterov}
		}
		for _, lr := range []float64{0.1, 0.05, 0.2} {
			grads := randomGrads(rng, params, 1)
			if err := o.Step(lr, grads); err != nil {
				t.Fatal(err)
			}
			for i := range params {
				refs[i].step(want[i], toF64(grads[i]), lr*hp[i].lrScale, hp[i].weightDecay)
				assertClose(t, params[i].Name, params[i].Data, want[i], 2e-6)
			}
		}
	}
}

func TestSGDRejectsNesterovWithoutMomentum(t *testing.T) {
	p := []Param{{Name: "w", Shape: []int{1}, Data: []float32{1}}}
	if _, err := NewSGD(p, nil, SGDConfig{Nesterov: true}); err == nil {
		t.Fatal("no error")
	}
}
