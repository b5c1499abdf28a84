package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestNativeOpAdd checks that NativeOp takes over Gorgonia's Add of two
// tensors of one shape, in float32 and float64, and gives its values bit
// for bit, signed zeros and infinities included, into a reused buffer
// without allocating.
func TestNativeOpAdd(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		g := gorgonia.NewGraph()
		shape := tensor.Shape{3, 5, 7}
		x := gorgonia.NewTensor(g, dt, 3, gorgonia.WithShape(shape...), gorgonia.WithName("x"))
		y := gorgonia.NewTensor(g, dt, 3, gorgonia.WithShape(shape...), gorgonia.WithName("y"))
		sum, err := gorgonia.Add(x, y)
		if err != nil {
			t.Fatal(err)
		}
		native, ok := NativeOp(sum, []*gorgonia.Node{x, y})
		if !ok {
			t.Fatalf("%v: Gorgonia's Add of two %v tensors not taken over", dt, shape)
		}
		rng := rand.New(rand.NewPCG(1, uint64(dt.Size())))
		special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 1e-40, -3.5}
		xv, yv := randomDense(rng, dt, shape, special), randomDense(rng, dt, shape, special)
		want, err := sum.Op().Do(xv, yv)
		if err != nil {
			t.Fatal(err)
		}
		buf := tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
		got, err := native.UsePreallocDo(buf, xv, yv)
		if err != nil {
			t.Fatal(err)
		}
		if got != buf {
			t.Errorf("%v: the result is not the buffer given", dt)
		}
		if !sameBits(want.Data(), got.Data()) {
			t.Errorf("%v: native Add differs from Gorgonia's:\n got %v\nwant %v", dt, got.Data(), want.Data())
		}
		args := []gorgonia.Value{xv, yv} // as a runner passes them, in a slice it reuses
		if n := testing.AllocsPerRun(20, func() { _, _ = native.UsePreallocDo(buf, args...) }); n != 0 {
			t.Errorf("%v: native Add allocates %v times per call", dt, n)
		}
	}
}

// TestNativeOpDeclines checks that NativeOp leaves every other op to
// Gorgonia: other arithmetic, an Add that broadcasts a scalar, an Add of
// scalars, of integers, and ops of this package.
func TestNativeOpDeclines(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 3), gorgonia.WithName("x"))
	y := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 3), gorgonia.WithName("y"))
	s := gorgonia.NewScalar(g, tensor.Float32, gorgonia.WithName("s"))
	r := gorgonia.NewScalar(g, tensor.Float32, gorgonia.WithName("r"))
	i := gorgonia.NewMatrix(g, tensor.Int, gorgonia.WithShape(2, 3), gorgonia.WithName("i"))
	j := gorgonia.NewMatrix(g, tensor.Int, gorgonia.WithShape(2, 3), gorgonia.WithName("j"))
	must := func(n *gorgonia.Node, err error) *gorgonia.Node {
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	cases := map[string]struct {
		n  *gorgonia.Node
		in []*gorgonia.Node
	}{
		"Sub":            {must(gorgonia.Sub(x, y)), []*gorgonia.Node{x, y}},
		"HadamardProd":   {must(gorgonia.HadamardProd(x, y)), []*gorgonia.Node{x, y}},
		"tensor+scalar":  {must(gorgonia.Add(x, s)), []*gorgonia.Node{x, s}},
		"scalar+scalar":  {must(gorgonia.Add(s, r)), []*gorgonia.Node{s, r}},
		"int tensors":    {must(gorgonia.Add(i, j)), []*gorgonia.Node{i, j}},
		"ops.Add":        {must(Add(x, y)), []*gorgonia.Node{x, y}},
		"one input seen": {must(gorgonia.Add(x, y)), []*gorgonia.Node{x}},
	}
	for name, c := range cases {
		if _, ok := NativeOp(c.n, c.in); ok {
			t.Errorf("%s: taken over", name)
		}
	}
}

// randomDense returns a tensor of normal values with the special values
// spread through it.
func randomDense(rng *rand.Rand, dt tensor.Dtype, shape tensor.Shape, special []float64) *tensor.Dense {
	v := make([]float64, shape.TotalSize())
	for k := range v {
		v[k] = rng.NormFloat64()
		if k%5 == 0 {
			v[k] = special[rng.IntN(len(special))]
		}
	}
	if dt == tensor.Float32 {
		f := make([]float32, len(v))
		for k, x := range v {
			f[k] = float32(x)
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(f))
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
}

// sameBits reports whether two float slices hold the same bits.
func sameBits(a, b any) bool {
	switch x := a.(type) {
	case []float32:
		y := b.([]float32)
		for k := range x {
			if math.Float32bits(x[k]) != math.Float32bits(y[k]) {
				return false
			}
		}
		return len(x) == len(y)
	case []float64:
		y := b.([]float64)
		for k := range x {
			if math.Float64bits(x[k]) != math.Float64bits(y[k]) {
				return false
			}
		}
		return len(x) == len(y)
	}
	return false
}
