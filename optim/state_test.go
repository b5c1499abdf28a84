package optim

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// copyTensors deep-copies state, as a checkpoint round trip does.
func copyTensors(ts []Tensor) []Tensor {
	out := make([]Tensor, len(ts))
	for i, t := range ts {
		out[i] = Tensor{Name: t.Name, Shape: slices.Clone(t.Shape), Data: slices.Clone(t.Data)}
	}
	return out
}

func cloneParamData(params []Param) []Param {
	out := make([]Param, len(params))
	for i, p := range params {
		out[i] = Param{Name: p.Name, Shape: p.Shape, Data: slices.Clone(p.Data)}
	}
	return out
}

// TestOptimizerStateRoundTrip runs two steps, moves weights and state into
// a fresh optimizer and checks that both continue identically.
func TestOptimizerStateRoundTrip(t *testing.T) {
	builders := map[string]func([]Param) (Optimizer, error){
		"adamw": func(p []Param) (Optimizer, error) { return NewAdamW(p, nil, DefaultAdamWConfig()) },
		"sgd":   func(p []Param) (Optimizer, error) { return NewSGD(p, nil, DefaultSGDConfig()) },
	}
	for name, build := range builders {
		rng := rand.New(rand.NewPCG(13, 14))
		params := []Param{newParam(rng, "w", 3, 2), newParam(rng, "b", 2)}
		a, err := build(params)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := a.Step(0.01, randomGrads(rng, params, 1)); err != nil {
				t.Fatal(err)
			}
		}
		saved := copyTensors(a.StateTensors())
		params2 := cloneParamData(params)
		b, err := build(params2)
		if err != nil {
			t.Fatal(err)
		}
		// Unrelated tensors (the weights themselves) are ignored.
		withWeights := append(slices.Clone(saved), Tensor{Name: "w", Shape: []int{3, 2}, Data: params2[0].Data})
		if err := b.LoadState(withWeights); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b.StepCount() != 2 {
			t.Fatalf("%s: StepCount after load = %d, want 2", name, b.StepCount())
		}
		g := randomGrads(rng, params, 1)
		if err := a.Step(0.01, g); err != nil {
			t.Fatal(err)
		}
		if err := b.Step(0.01, g); err != nil {
			t.Fatal(err)
		}
		for i := range params {
			if !slices.Equal(params[i].Data, params2[i].Data) {
				t.Fatalf("%s: %s differs after resuming: %v vs %v", name, params[i].Name, params[i].Data, params2[i].Data)
			}
		}
	}
}

func TestAdamWStateNames(t *testing.T) {
	params := []Param{{Name: "blocks.0.w", Shape: []int{2, 1}, Data: make([]float32, 2)}}
	o, err := NewAdamW(params, nil, DefaultAdamWConfig())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ts := range o.StateTensors() {
		names = append(names, ts.Name)
	}
	want := []string{"optim.step", "optim.exp_avg.blocks.0.w", "optim.exp_avg_sq.blocks.0.w"}
	if !slices.Equal(names, want) {
		t.Fatalf("names %v, want %v", names, want)
	}
	s, err := NewSGD(params, nil, DefaultSGDConfig())
	if err != nil {
		t.Fatal(err)
	}
	if got := s.StateTensors(); len(got) != 2 || got[1].Name != "optim.momentum_buffer.blocks.0.w" || !slices.Equal(got[1].Shape, []int{2, 1}) {
		t.Fatalf("SGD state %+v", got)
	}
}

func TestLoadStateErrorsLeaveStateUnchanged(t *testing.T) {
	params := []Param{{Name: "w", Shape: []int{2}, Data: []float32{1, 2}}}
	o, err := NewAdamW(params, nil, DefaultAdamWConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Step(0.1, [][]float32{{1, 1}}); err != nil {
		t.Fatal(err)
	}
	good := copyTensors(o.StateTensors())
	before := copyTensors(o.StateTensors())
	edit := func(f func([]Tensor) []Tensor) []Tensor { return f(copyTensors(good)) }
	for _, tc := range []struct {
		name    string
		tensors []Tensor
		errHas  string
	}{
		{"missing moment", edit(func(ts []Tensor) []Tensor { return ts[:2] }), "optim.exp_avg_sq.w"},
		{"missing step", edit(func(ts []Tensor) []Tensor { return ts[1:] }), "optim.step"},
		{"wrong shape", edit(func(ts []Tensor) []Tensor { ts[1].Shape = []int{1, 2}; return ts }), "shape"},
		{"wrong length", edit(func(ts []Tensor) []Tensor { ts[2].Data = ts[2].Data[:1]; return ts }), "elements"},
		{"fractional step", edit(func(ts []Tensor) []Tensor { ts[0].Data[0] = 1.5; return ts }), "1.5"},
		{"negative step", edit(func(ts []Tensor) []Tensor { ts[0].Data[0] = -1; return ts }), "-1"},
		{"duplicate", edit(func(ts []Tensor) []Tensor { return append(ts, ts[1]) }), "twice"},
		{"other optimizer", edit(func(ts []Tensor) []Tensor {
			return append(ts, Tensor{Name: "optim.momentum_buffer.w", Shape: []int{2}, Data: make([]float32, 2)})
		}), "optim.momentum_buffer.w"},
	} {
		// Corrupt the moments we would load so a partial copy would show.
		for _, ts := range tc.tensors[1:] {
			for i := range ts.Data {
				ts.Data[i] = 99
			}
		}
		err := o.LoadState(tc.tensors)
		if err == nil || !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.errHas)
		}
		for i, ts := range o.StateTensors() {
			if !slices.Equal(ts.Data, before[i].Data) {
				t.Fatalf("%s: state %s changed by a failed load", tc.name, ts.Name)
			}
		}
	}
}

func TestEMAStateRoundTrip(t *testing.T) {
	params := []Param{{Name: "w", Shape: []int{2}, Data: []float32{1, 2}}}
	e, err := NewEMA(params, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	params[0].Data[0] = 3
	e.Update()
	saved := copyTensors(e.StateTensors())
	e2, err := NewEMA([]Param{{Name: "w", Shape: []int{2}, Data: []float32{0, 0}}}, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if err := e2.LoadState(saved); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(e2.Weights()[0], []float32{2, 2}) {
		t.Fatalf("loaded %v, want [2 2]", e2.Weights()[0])
	}
	if err := e2.LoadState(nil); err == nil || !strings.Contains(err.Error(), "ema.w") {
		t.Fatalf("empty load: %v", err)
	}
}
