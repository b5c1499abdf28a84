package optim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refAdamW is torch.optim.AdamW written out in float64 for one tensor.
type refAdamW struct {
	b1, b2, eps float64
	m, v        []float64
	t           int
}

func (r *refAdamW) step(p, g []float64, lr, wd float64) {
	if r.m == nil {
		r.m, r.v = make([]float64, len(p)), make([]float64, len(p))
	}
	r.t++
	for i := range p {
		p[i] -= lr * wd * p[i]
		r.m[i] = r.b1*r.m[i] + (1-r.b1)*g[i]
		r.v[i] = r.b2*r.v[i] + (1-r.b2)*g[i]*g[i]
		mHat := r.m[i] / (1 - math.Pow(r.b1, float64(r.t)))
		vHat := r.v[i] / (1 - math.Pow(r.b2, float64(r.t)))
		p[i] -= lr * mHat / (math.Sqrt(vHat) + r.eps)
	}
}

func TestAdamWHandComputedFirstStep(t *testing.T) {
	// p=1, g=0.5, lr=0.1, wd=0.05: p → 1−0.1·0.05 = 0.995; m̂ = 0.5, v̂ = 0.25,
	// so p → 0.995 − 0.1·0.5/(0.5+1e-8) ≈ 0.895.
	p := Param{Name: "w", Shape: []int{1, 1}, Data: []float32{1}}
	o, err := NewAdamW([]Param{p}, nil, DefaultAdamWConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Step(0.1, [][]float32{{0.5}}); err != nil {
		t.Fatal(err)
	}
	if got := p.Data[0]; math.Abs(float64(got)-0.895) > 1e-6 {
		t.Fatalf("p = %.9g, want 0.895", got)
	}
	m, v := o.m, o.v
	if math.Abs(float64(m[0][0])-0.05) > 1e-8 || math.Abs(float64(v[0][0])-0.00025) > 1e-10 {
		t.Fatalf("m, v = %g, %g, want 0.05, 0.00025", m[0][0], v[0][0])
	}
}

func TestAdamWMatchesReferenceOverThreeSteps(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params func(*rand.Rand) []Param
	}{
		{"small", func(rng *rand.Rand) []Param {
			return []Param{newParam(rng, "w", 2, 3), newParam(rng, "b", 3)}
		}},
		{"multi-unit", bigParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			params := tc.params(rng)
			// Alternate params between a decayed group with LRScale 1 and a
			// non-decayed one with LRScale 0.5.
			groups := []Group{{Name: "decay", WeightDecay: 0.05, LRScale: 1}, {Name: "no_decay", LRScale: 0.5}}
			for i := range params {
				groups[i%2].Params = append(groups[i%2].Params, i)
			}
			cfg := AdamWConfig{Beta1: 0.8, Beta2: 0.95, Eps: 1e-6}
			o, err := NewAdamW(params, groups, cfg)
			if err != nil {
				t.Fatal(err)
			}
			want := snapshot(params)
			refs := make([]refAdamW, len(params))
			for i := range refs {
				refs[i] = refAdamW{b1: cfg.Beta1, b2: cfg.Beta2, eps: cfg.Eps}
			}
			for step, lr := range []float64{1e-2, 3e-2, 2e-3} {
				grads := randomGrads(rng, params, 1)
				if err := o.Step(lr, grads); err != nil {
					t.Fatal(err)
				}
				for i := range params {
					g := groups[i%2]
					refs[i].step(want[i], toF64(grads[i]), lr*g.LRScale, g.WeightDecay)
					assertClose(t, params[i].Name, params[i].Data, want[i], 2e-6)
				}
				if o.StepCount() != step+1 {
					t.Fatalf("StepCount = %d, want %d", o.StepCount(), step+1)
				}
			}
		})
	}
}

func TestAdamWMinimisesQuadratic(t *testing.T) {
	// f(p) = ½ Σ a_i (p_i − c_i)², ∇f = a ⊙ (p − c); minimum at c.
	a := []float32{1, 10, 0.1, 3}
	c := []float32{0.5, -2, 3, 0}
	p := Param{Name: "x", Shape: []int{2, 2}, Data: []float32{0, 0, 0, 0}}
	cfg := DefaultAdamWConfig()
	cfg.WeightDecay = 0
	o, err := NewAdamW([]Param{p}, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sched := Cosine{BaseLR: 0.1, Steps: 3000}
	g := [][]float32{make([]float32, 4)}
	for step := range sched.Steps {
		for i := range g[0] {
			g[0][i] = a[i] * (p.Data[i] - c[i])
		}
		if err := o.Step(sched.LR(step), g); err != nil {
			t.Fatal(err)
		}
	}
	for i := range c {
		if math.Abs(float64(p.Data[i]-c[i])) > 1e-3 {
			t.Errorf("x[%d] = %g, want %g", i, p.Data[i], c[i])
		}
	}
}

func TestAdamWRejectsBadInput(t *testing.T) {
	p := []Param{{Name: "w", Shape: []int{2}, Data: make([]float32, 2)}}
	o, err := NewAdamW(p, nil, DefaultAdamWConfig())
	if err != nil {
		t.Fatal(err)
	}
	for name, step := range map[string]func() error{
		"gradient count":  func() error { return o.Step(0.1, nil) },
		"gradient length": func() error { return o.Step(0.1, [][]float32{{1}}) },
		"negative lr":     func() error { return o.Step(-1, [][]float32{{1, 2}}) },
		"NaN lr":          func() error { return o.Step(math.NaN(), [][]float32{{1, 2}}) },
	} {
		if step() == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if o.StepCount() != 0 {
		t.Errorf("failed steps counted: %d", o.StepCount())
	}
	bad := map[string]struct {
		params []Param
		cfg    AdamWConfig
	}{
		"beta1 = 1":      {p, AdamWConfig{Beta1: 1, Beta2: 0.9}},
		"negative eps":   {p, AdamWConfig{Beta1: 0.9, Beta2: 0.9, Eps: -1}},
		"shape mismatch": {[]Param{{Name: "w", Shape: []int{3}, Data: make([]float32, 2)}}, DefaultAdamWConfig()},
		"duplicate name": {[]Param{p[0], p[0]}, DefaultAdamWConfig()},
		"empty name":     {[]Param{{Shape: []int{2}, Data: make([]float32, 2)}}, DefaultAdamWConfig()},
		"negative dim":   {[]Param{{Name: "w", Shape: []int{-2, -1}, Data: make([]float32, 2)}}, DefaultAdamWConfig()},
	}
	for name, tc := range bad {
		if _, err := NewAdamW(tc.params, nil, tc.cfg); err == nil {
			t.Errorf("%s: NewAdamW accepted it", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
