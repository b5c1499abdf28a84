package optim

import (
	"math/rand/v2"
	"testing"
)

func TestEMAFormula(t *testing.T) {
	p := Param{Name: "w", Shape: []int{2}, Data: []float32{1, -1}}
	e, err := NewEMA([]Param{p}, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	p.Data[0], p.Data[1] = 2, 0
	e.Update() // 0.9·1 + 0.1·2 = 1.1; 0.9·(−1) + 0 = −0.9
	assertClose(t, "after 1", e.Weights()[0], []float64{1.1, -0.9}, 1e-7)
	p.Data[0], p.Data[1] = 3, 1
	e.Update() // 0.9·1.1 + 0.3 = 1.29; −0.81 + 0.1 = −0.71
	assertClose(t, "after 2", e.Weights()[0], []float64{1.29, -0.71}, 1e-7)
	if st := e.StateTensors(); st[0].Name != "ema.w" {
		t.Fatalf("state name %q", st[0].Name)
	}
}

func TestEMAManyUnits(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	params := bigParams(rng)
	e, err := NewEMA(params, DefaultEMADecay)
	if err != nil {
		t.Fatal(err)
	}
	want := snapshot(params)
	for i := range params {
		for j := range params[i].Data {
			params[i].Data[j] = float32(rng.NormFloat64())
			want[i][j] = DefaultEMADecay*want[i][j] + (1-DefaultEMADecay)*float64(params[i].Data[j])
		}
	}
	e.Update()
	for i := range params {
		assertClose(t, params[i].Name, e.Weights()[i], want[i], 1e-6)
	}
}

func TestEMARejectsBadDecay(t *testing.T) {
	if _, err := NewEMA(nil, 1.5); err == nil {
		t.Fatal("decay 1.5 accepted")
	}
}
