package optim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// cloneParamsData returns params with copies of their buffers.
func cloneParamsData(params []Param) []Param {
	out := cloneParams(params)
	for i := range out {
		out[i].Data = slices.Clone(out[i].Data)
	}
	return out
}

// TestStepScaledIsClipThenStep checks that NormScale and StepScaled update
// the weights and state exactly as Clip and Step do, over two steps of each
// optimizer, with and without clipping, and leave the gradients as they
// were.
func TestStepScaledIsClipThenStep(t *testing.T) {
	makers := map[string]func(params []Param) (Optimizer, error){
		"adamw": func(p []Param) (Optimizer, error) { return NewAdamW(p, nil, DefaultAdamWConfig()) },
		"sgd":   func(p []Param) (Optimizer, error) { return NewSGD(p, nil, DefaultSGDConfig()) },
		"sgd-plain": func(p []Param) (Optimizer, error) {
			return NewSGD(p, nil, SGDConfig{WeightDecay: 0.01})
		},
	}
	for name, newOpt := range makers {
		for _, maxNorm := range []float64{0, 1, 1e9} {
			rng := rand.New(rand.NewPCG(7, 8))
			params := bigParams(rng)
			a, b := cloneParamsData(params), cloneParamsData(params)
			optA, err := newOpt(a)
			if err != nil {
				t.Fatal(err)
			}
			optB, err := newOpt(b)
			if err != nil {
				t.Fatal(err)
			}
			clipA, _ := NewClipper(a)
			clipB, _ := NewClipper(b)
			for step := range 2 {
				grads := randomGrads(rng, params, 0.05)
				gA := make([][]float32, len(grads))
				for i := range grads {
					gA[i] = slices.Clone(grads[i])
				}
				normA, err := clipA.Clip(gA, maxNorm)
				if err != nil {
					t.Fatal(err)
				}
				if err := optA.Step(1e-2, gA); err != nil {
					t.Fatal(err)
				}
				gB := make([][]float32, len(grads))
				for i := range grads {
					gB[i] = slices.Clone(grads[i])
				}
				normB, scale, err := clipB.NormScale(gB, maxNorm)
				if err != nil {
					t.Fatal(err)
				}
				if maxNorm == 1 && !(scale < 1) {
					t.Fatalf("%s max %g: scale %g, want clipping", name, maxNorm, scale)
				}
				if err := optB.StepScaled(1e-2, scale, gB); err != nil {
					t.Fatal(err)
				}
				if math.Float64bits(normA) != math.Float64bits(normB) {
					t.Fatalf("%s max %g step %d: norm %v, Clip's %v", name, maxNorm, step, normB, normA)
				}
				for i := range grads {
					if !slices.Equal(gB[i], grads[i]) {
						t.Fatalf("%s max %g: StepScaled changed gradient %d", name, maxNorm, i)
					}
				}
				for i := range a {
					if !slices.Equal(a[i].Data, b[i].Data) {
						t.Fatalf("%s max %g step %d: %s differs from Clip and Step", name, maxNorm, step, a[i].Name)
					}
				}
				stA, stB := optA.StateTensors(), optB.StateTensors()
				for i := range stA {
					if !slices.Equal(stA[i].Data, stB[i].Data) {
						t.Fatalf("%s max %g step %d: state %s differs", name, maxNorm, step, stA[i].Name)
					}
				}
			}
		}
	}
}

// TestSumSquaresOrder pins the norm's summation order: four running sums
// over the strided elements, the rest into the first.
func TestSumSquaresOrder(t *testing.T) {
	x := []float32{1e8, 1, -1e8, 1, 3, 0.5, 2, 7, 1e-3}
	var s0, s1, s2, s3 float64
	for i := 0; i+4 <= 8; i += 4 {
		s0 += float64(x[i]) * float64(x[i])
		s1 += float64(x[i+1]) * float64(x[i+1])
		s2 += float64(x[i+2]) * float64(x[i+2])
		s3 += float64(x[i+3]) * float64(x[i+3])
	}
	s0 += float64(x[8]) * float64(x[8])
	if got, want := sumSquares(x), (s0+s1)+(s2+s3); got != want {
		t.Fatalf("sumSquares = %v, want %v", got, want)
	}
}
