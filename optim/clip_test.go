package optim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vit-train/vit-train/nn/vec"
)

func TestClipScalesToMaxNorm(t *testing.T) {
	params := []Param{
		{Name: "a", Shape: []int{2}, Data: make([]float32, 2)},
		{Name: "b", Shape: []int{1}, Data: make([]float32, 1)},
	}
	c, err := NewClipper(params)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		maxNorm float64
		coef    float64 // expected scale factor
	}{
		{6.5, 6.5 / (13 + 1e-6)}, // ‖(3, 4, 12)‖ = 13
		{13, 13 / (13 + 1e-6)},   // at the limit the 1e-6 still shrinks it a little
		{100, 1},
		{0, 1}, // no clipping, norm only
	} {
		grads := [][]float32{{3, 4}, {12}}
		norm, err := c.Clip(grads, tc.maxNorm)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(norm-13) > 1e-12 {
			t.Errorf("max %g: norm %g, want 13", tc.maxNorm, norm)
		}
		assertClose(t, "a", grads[0], []float64{3 * tc.coef, 4 * tc.coef}, 1e-7)
		assertClose(t, "b", grads[1], []float64{12 * tc.coef}, 1e-7)
	}
	if got := ClipCoef(13, 6.5); math.Abs(got-6.5/(13+1e-6)) > 1e-15 {
		t.Errorf("ClipCoef = %g", got)
	}
}

func TestClipNormOfManyUnits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	params := bigParams(rng)
	grads := randomGrads(rng, params, 2)
	want := 0.0
	for _, g := range grads {
		for _, v := range g {
			want += float64(v) * float64(v)
		}
	}
	want = math.Sqrt(want)
	c, err := NewClipper(params)
	if err != nil {
		t.Fatal(err)
	}
	norm, err := c.Clip(grads, want/4)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(norm-want) > 1e-9*want {
		t.Fatalf("norm %g, want %g", norm, want)
	}
	after, _ := c.Norm(grads)
	if math.Abs(after-want/4) > 1e-5*want {
		t.Fatalf("norm after clipping %g, want %g", after, want/4)
	}
}

func TestClipRejectsMisalignedGrads(t *testing.T) {
	c, err := NewClipper([]Param{{Name: "a", Shape: []int{2}, Data: make([]float32, 2)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Clip([][]float32{{1}}, 1); err == nil {
		t.Fatal("no error")
	}
}

// TestNormUnitsKeepTheirBits checks that the norm's partial sum of every
// work unit is that unit's sum of squares span by span (vec.SumSquares64
// of each, added in order), bit for bit, whether its group of four units
// ran together (vec.SumSquares64x4) or one by one; the parameters give
// groups of both kinds.
func TestNormUnitsKeepTheirBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	params := []Param{
		newParam(rng, "a.weight", 8*grain+5),
		newParam(rng, "a.bias", 7),
		newParam(rng, "b.weight", 5, grain),
		newParam(rng, "b.bias", 3),
	}
	grads := randomGrads(rng, params, 3)
	c, err := NewClipper(params)
	if err != nil {
		t.Fatal(err)
	}
	norm, err := c.Norm(grads)
	if err != nil {
		t.Fatal(err)
	}
	c.grads = grads
	together, alone := 0, 0
	for q := range (c.part.units() + 3) / 4 {
		if _, ok := c.equalSpans(4*q, min(4*q+4, c.part.units())); ok {
			together++
		} else {
			alone++
		}
	}
	c.grads = nil
	if together == 0 || alone == 0 {
		t.Fatalf("%d groups of units ran together and %d one by one; the test needs both", together, alone)
	}
	total := 0.0
	for u := range c.part.units() {
		want := 0.0
		for _, s := range c.part.unit(u) {
			want += vec.SumSquares64(grads[s.t][s.lo:s.hi])
		}
		if math.Float64bits(c.partial[u]) != math.Float64bits(want) {
			t.Fatalf("unit %d: partial sum %v, want %v", u, c.partial[u], want)
		}
		total += want
	}
	if want := math.Sqrt(total); math.Float64bits(norm) != math.Float64bits(want) {
		t.Fatalf("norm %v, want %v", norm, want)
	}
}
