package ops_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
)

func batchNormFunc(st *ops.BatchNormState, training bool) opstest.Func {
	return func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		return ops.BatchNorm2d(in[0], in[1], in[2], st, training)
	}
}

func TestBatchNormGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name     string
		x        []int
		training bool
	}{
		{"training 4-D", []int{3, 4, 2, 3}, true},
		{"training 2-D", []int{5, 3}, true},
		{"eval 4-D", []int{3, 4, 2, 3}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.x[1]
			st := ops.NewBatchNormState(c)
			for i := range c {
				st.RunningMean[i] = float32(rng.Float64() - 0.5)
				st.RunningVar[i] = float32(0.5 + rng.Float64())
			}
			inputs := []*tensor.Dense{opstest.Rand(rng, -1, 2, tc.x...), opstest.Rand(rng, 0.5, 1.5, c), opstest.Rand(rng, -1, 1, c)}
			opstest.GradCheck(t, batchNormFunc(st, tc.training), inputs, []int{0, 1, 2}, opstest.Options{})
			opstest.AgreeF32(t, batchNormFunc(st, tc.training), inputs, []int{0, 1, 2}, 1e-5)
		})
	}
}

func TestBatchNormTrainingValuesAndRunningStats(t *testing.T) {
	// x is (B=2, C=2, 1, 2): channel 0 holds 1, 2, 3, 4 (mean 2.5, biased
	// variance 1.25, unbiased 5/3); channel 1 holds 0, 0, 2, 2 (mean 1,
	// variance 1, unbiased 4/3).
	x := tensor.New(tensor.WithShape(2, 2, 1, 2), tensor.WithBacking([]float64{1, 2, 0, 0, 3, 4, 2, 2}))
	w := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{2, 1}))
	b := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{0.5, -1}))
	st := ops.NewBatchNormState(2)
	f := batchNormFunc(st, true)

	s0, s1 := 1/math.Sqrt(1.25+1e-5), 1/math.Sqrt(1+1e-5)
	want := []float64{
		2*(1-2.5)*s0 + 0.5, 2*(2-2.5)*s0 + 0.5, (0-1)*s1 - 1, (0-1)*s1 - 1,
		2*(3-2.5)*s0 + 0.5, 2*(4-2.5)*s0 + 0.5, (2-1)*s1 - 1, (2-1)*s1 - 1,
	}
	wantMean := []float64{0, 0}
	wantVar := []float64{1, 1}
	for run := 1; run <= 2; run++ {
		r, err := opstest.Eval(f, []*tensor.Dense{x, w, b}, nil, tensor.Float64, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Abs(r.Out[i]-want[i]) > 1e-12 {
				t.Fatalf("run %d: output %d = %v, want %v", run, i, r.Out[i], want[i])
			}
		}
		for i, m := range []float64{2.5, 1} {
			wantMean[i] = 0.9*wantMean[i] + 0.1*m
		}
		for i, v := range []float64{5.0 / 3, 4.0 / 3} {
			wantVar[i] = 0.9*wantVar[i] + 0.1*v
		}
		for i := range 2 {
			if math.Abs(float64(st.RunningMean[i])-wantMean[i]) > 1e-6 || math.Abs(float64(st.RunningVar[i])-wantVar[i]) > 1e-6 {
				t.Fatalf("run %d channel %d: running mean %v var %v, want %v %v", run, i, st.RunningMean[i], st.RunningVar[i], wantMean[i], wantVar[i])
			}
		}
		if st.NumBatchesTracked != int64(run) {
			t.Fatalf("run %d: NumBatchesTracked = %d", run, st.NumBatchesTracked)
		}
	}
}

func TestBatchNormEvalUsesRunningStats(t *testing.T) {
	x := tensor.New(tensor.WithShape(2, 2, 1, 2), tensor.WithBacking([]float64{1, 2, 0, 0, 3, 4, 2, 2}))
	w := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{2, 1}))
	b := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{0.5, -1}))
	st := &ops.BatchNormState{RunningMean: []float32{1, -1}, RunningVar: []float32{3, 0.25}}
	r, err := opstest.Eval(batchNormFunc(st, false), []*tensor.Dense{x, w, b}, nil, tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	xs := x.Data().([]float64)
	for i, got := range r.Out {
		ch := (i / 2) % 2
		var want float64
		if ch == 0 {
			want = 2*(xs[i]-1)/math.Sqrt(3+1e-5) + 0.5
		} else {
			want = (xs[i]+1)/math.Sqrt(0.25+1e-5) - 1
		}
		if math.Abs(got-want) > 1e-6 {
			t.Fatalf("output %d = %v, want %v", i, got, want)
		}
	}
	if st.RunningMean[0] != 1 || st.RunningVar[1] != 0.25 || st.NumBatchesTracked != 0 {
		t.Fatalf("eval mode changed the state: %+v", st)
	}
}

func TestBatchNormErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	node := func(name string, shape ...int) *gorgonia.Node {
		return gorgonia.NewTensor(g, tensor.Float64, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.Of(tensor.Float64))))
	}
	x := node("x", 2, 3, 2, 2)
	w, b := node("w", 3), node("b", 3)
	if _, err := ops.BatchNorm2d(x, node("w2", 4), b, ops.NewBatchNormState(3), true); err == nil {
		t.Error("expected an error for a weight of 4 channels against 3")
	}
	if _, err := ops.BatchNorm2d(x, w, b, ops.NewBatchNormState(2), true); err == nil {
		t.Error("expected an error for a state of 2 channels against 3")
	}
	if _, err := ops.BatchNorm2d(x, w, nil, ops.NewBatchNormState(3), true); err == nil {
		t.Error("expected an error for a nil bias")
	}
	// One value per channel cannot give a batch variance.
	one := tensor.New(tensor.WithShape(1, 3, 1, 1), tensor.WithBacking([]float64{1, 2, 3}))
	_, err := opstest.Eval(batchNormFunc(ops.NewBatchNormState(3), true),
		[]*tensor.Dense{one, tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 1, 1})),
			tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{0, 0, 0}))}, nil, tensor.Float64, 1)
	if err == nil {
		t.Error("expected an error for training on one value per channel")
	}
}
