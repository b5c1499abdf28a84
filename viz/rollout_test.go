package viz_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vit-train/vit-train/viz"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestHeadMean(t *testing.T) {
	// Two heads of (2, 2).
	probs := []float64{1, 0, 0.25, 0.75, 0, 1, 0.75, 0.25}
	got, err := viz.HeadMean(probs, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.5, 0.5, 0.5, 0.5}
	for i := range want {
		if !near(got[i], want[i], 1e-15) {
			t.Fatalf("HeadMean = %v, want %v", got, want)
		}
	}
	if _, err := viz.HeadMean(probs, 3, 2); err == nil {
		t.Fatal("HeadMean accepted 8 values as 3 heads of (2, 2)")
	}
}

// TestRolloutTwoLayers checks a hand-computed example:
//
//	layer 1: heads I and the swap, mean [[.5 .5] [.5 .5]], +I and renormalised [[.75 .25] [.25 .75]]
//	layer 2: heads [[.6 .4] [.2 .8]] and [[.2 .8] [.6 .4]], mean [[.4 .6] [.4 .6]], → [[.7 .3] [.2 .8]]
//	rollout = layer2 · layer1 = [[.6 .4] [.35 .65]]
func TestRolloutTwoLayers(t *testing.T) {
	l1 := []float64{1, 0, 0, 1, 0, 1, 1, 0}
	l2 := []float64{0.6, 0.4, 0.2, 0.8, 0.2, 0.8, 0.6, 0.4}
	got, err := viz.Rollout([][]float64{l1, l2}, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.6, 0.4, 0.35, 0.65}
	for i := range want {
		if !near(got[i], want[i], 1e-12) {
			t.Fatalf("rollout = %v, want %v", got, want)
		}
	}
	// The order of the product matters: first·second would give [[.575 .425] [.325 .675]].
	rev, err := viz.Rollout([][]float64{l2, l1}, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if near(rev[0], 0.6, 1e-9) || !near(rev[0], 0.575, 1e-12) {
		t.Fatalf("reversed rollout = %v, want [[.575 .425] [.325 .675]]", rev)
	}
}

// randomAttention returns (heads, n, n) rows drawn from a softmax of random
// logits, so every row sums to 1.
func randomAttention(rng *rand.Rand, heads, n int) []float64 {
	p := make([]float64, heads*n*n)
	for r := 0; r < heads*n; r++ {
		row := p[r*n : (r+1)*n]
		var sum float64
		for j := range row {
			row[j] = math.Exp(3 * rng.NormFloat64())
			sum += row[j]
		}
		for j := range row {
			row[j] /= sum
		}
	}
	return p
}

// naiveRollout is the rollout written out with explicit loops, as an
// independent reference.
func naiveRollout(layers [][]float64, heads, n int) []float64 {
	joint := make([]float64, n*n)
	for i := 0; i < n; i++ {
		joint[i*n+i] = 1
	}
	for _, p := range layers {
		a := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				for h := 0; h < heads; h++ {
					a[i*n+j] += p[(h*n+i)*n+j]
				}
				a[i*n+j] /= float64(heads)
				if i == j {
					a[i*n+j]++
				}
			}
			// every head's row sums to 1, so A+I's row sums to 2
			for j := 0; j < n; j++ {
				a[i*n+j] /= 2
			}
		}
		next := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				for k := 0; k < n; k++ {
					next[i*n+j] += a[i*n+k] * joint[k*n+j]
				}
			}
		}
		joint = next
	}
	return joint
}

func TestRolloutRowsSumToOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const heads, n, depth = 3, 7, 5
	var layers [][]float64
	for l := 0; l < depth; l++ {
		layers = append(layers, randomAttention(rng, heads, n))
	}
	got, err := viz.Rollout(layers, heads, n)
	if err != nil {
		t.Fatal(err)
	}
	want := naiveRollout(layers, heads, n)
	for i := 0; i < n; i++ {
		var sum float64
		for j := 0; j < n; j++ {
			v := got[i*n+j]
			if v < 0 || !near(v, want[i*n+j], 1e-12) {
				t.Fatalf("rollout[%d][%d] = %g, want %g", i, j, v, want[i*n+j])
			}
			sum += v
		}
		if !near(sum, 1, 1e-12) {
			t.Errorf("rollout row %d sums to %.15g", i, sum)
		}
	}
}

func TestRolloutErrors(t *testing.T) {
	if _, err := viz.Rollout(nil, 1, 2); err == nil {
		t.Error("Rollout accepted no layers")
	}
	if _, err := viz.Rollout([][]float64{{1, 0, 0, 1}, {1, 0, 0}}, 1, 2); err == nil {
		t.Error("Rollout accepted a short second layer")
	}
}

func TestTokenMap(t *testing.T) {
	att := []float64{
		0, 1, 2, 3,
		4, 5, 6, 7,
		8, 9, 10, 11,
		12, 13, 14, 15,
	}
	got, err := viz.TokenMap(att, 4, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != 6 || got[1] != 7 {
		t.Fatalf("TokenMap(token 1, prefix 2) = %v, want [6 7]", got)
	}
	got[0] = -1
	if att[6] != 6 {
		t.Fatal("TokenMap returned a view of its input")
	}
	for _, bad := range [][2]int{{4, 1}, {-1, 1}, {0, 4}} {
		if _, err := viz.TokenMap(att, 4, bad[0], bad[1]); err == nil {
			t.Errorf("TokenMap accepted token %d, prefix %d", bad[0], bad[1])
		}
	}
}
