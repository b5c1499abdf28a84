package ops_test

import (
	"math"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/ops"
	"github.com/vit-train/vit-train/nn/ops/opstest"
	"github.com/vit-train/vit-train/nn/runner"
)

// TestRandomnessStreams checks, for several drop rates, that the keep rate
// is 1−p and that two streams and two consecutive steps are independent:
// two masks agree on a fraction p² + (1−p)² of the elements.
func TestRandomnessStreams(t *testing.T) {
	const n = 100000
	for _, p := range []float64{0.1, 0.5, 0.9} {
		g := gorgonia.NewGraph()
		x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(n), gorgonia.WithName("x"), gorgonia.WithValue(filled(1, n)))
		r := ops.NewRandomness(77)
		a, err := ops.Dropout(x, p, r)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ops.Dropout(x, p, r)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := runner.Compile(g, a, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
		ma, mb := opstest.Float64s(prog.Value(a)), opstest.Float64s(prog.Value(b))
		r.SetStep(1)
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
		next := opstest.Float64s(prog.Value(a))

		sigma := math.Sqrt(p * (1 - p) / n)
		agreeP := p*p + (1-p)*(1-p)
		agreeSigma := math.Sqrt(agreeP * (1 - agreeP) / n)
		kept, sameStream, sameStep := 0, 0, 0
		for i := range ma {
			if ma[i] != 0 {
				kept++
			}
			if (ma[i] != 0) == (mb[i] != 0) {
				sameStream++
			}
			if (ma[i] != 0) == (next[i] != 0) {
				sameStep++
			}
		}
		if d := math.Abs(float64(kept)/n - (1 - p)); d > 6*sigma {
			t.Errorf("p = %v: kept fraction %.4f, want %.4f ± %.4f", p, float64(kept)/n, 1-p, 6*sigma)
		}
		for what, same := range map[string]int{"two streams": sameStream, "two steps": sameStep} {
			if d := math.Abs(float64(same)/n - agreeP); d > 6*agreeSigma {
				t.Errorf("p = %v: %s agree on %.4f of the elements, want %.4f ± %.4f", p, what, float64(same)/n, agreeP, 6*agreeSigma)
			}
		}
	}
}

func TestRandomnessAccessors(t *testing.T) {
	r := ops.NewRandomness(9)
	if r.Seed() != 9 || r.Step() != 0 || r.Streams() != 0 {
		t.Fatalf("new Randomness: seed %d, step %d, streams %d", r.Seed(), r.Step(), r.Streams())
	}
	r.SetStep(1234)
	if r.Step() != 1234 {
		t.Fatalf("step %d after SetStep(1234)", r.Step())
	}
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(4, 2), gorgonia.WithName("x"))
	for i := range 3 {
		if _, err := ops.DropPath(x, 0.1, r); err != nil {
			t.Fatal(err)
		}
		if got := r.Streams(); got != uint64(i+1) {
			t.Fatalf("after %d ops, %d streams", i+1, got)
		}
	}
}
