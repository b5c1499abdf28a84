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

type convCase struct {
	name        string
	x, w        []int
	stride, pad int
	bias        bool
}

var convCases = []convCase{
	{"3x3 same", []int{2, 3, 5, 5}, []int{4, 3, 3, 3}, 1, 1, true},
	{"3x3 stride 2", []int{2, 3, 6, 5}, []int{4, 3, 3, 3}, 2, 1, false},
	{"1x1 direct", []int{2, 4, 3, 3}, []int{5, 4, 1, 1}, 1, 0, true},
	{"1x1 stride 2", []int{2, 4, 5, 5}, []int{3, 4, 1, 1}, 2, 0, false},
	{"7x7 stem", []int{1, 2, 9, 8}, []int{2, 2, 7, 7}, 2, 3, false},
	{"2x3 valid", []int{3, 2, 4, 6}, []int{2, 2, 2, 3}, 1, 0, true},
}

func conv2dFunc(tc convCase) opstest.Func {
	return func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
		var b *gorgonia.Node
		if tc.bias {
			b = in[2]
		}
		return ops.Conv2d(in[0], in[1], b, tc.stride, tc.pad)
	}
}

func convInputs(rng *rand.Rand, tc convCase) ([]*tensor.Dense, []int) {
	inputs := []*tensor.Dense{opstest.Rand(rng, -1, 1, tc.x...), opstest.Rand(rng, -1, 1, tc.w...)}
	wrt := []int{0, 1}
	if tc.bias {
		inputs = append(inputs, opstest.Rand(rng, -1, 1, tc.w[0]))
		wrt = append(wrt, 2)
	}
	return inputs, wrt
}

func TestConv2dGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range convCases {
		t.Run(tc.name, func(t *testing.T) {
			inputs, wrt := convInputs(rng, tc)
			opstest.GradCheck(t, conv2dFunc(tc), inputs, wrt, opstest.Options{})
			opstest.AgreeF32(t, conv2dFunc(tc), inputs, wrt, 1e-5)
		})
	}
}

// naiveConv2d is the textbook definition of the convolution, one output
// element at a time.
func naiveConv2d(x, w, b []float64, xs, ws []int, stride, pad int) []float64 {
	bn, c, h, wd := xs[0], xs[1], xs[2], xs[3]
	o, kh, kw := ws[0], ws[2], ws[3]
	oh, ow := (h+2*pad-kh)/stride+1, (wd+2*pad-kw)/stride+1
	y := make([]float64, bn*o*oh*ow)
	for s := 0; s < bn; s++ {
		for f := 0; f < o; f++ {
			for oy := 0; oy < oh; oy++ {
				for ox := 0; ox < ow; ox++ {
					acc := 0.0
					if b != nil {
						acc = b[f]
					}
					for ch := 0; ch < c; ch++ {
						for i := 0; i < kh; i++ {
							for j := 0; j < kw; j++ {
								iy, ix := oy*stride-pad+i, ox*stride-pad+j
								if iy < 0 || iy >= h || ix < 0 || ix >= wd {
									continue
								}
								acc += x[((s*c+ch)*h+iy)*wd+ix] * w[((f*c+ch)*kh+i)*kw+j]
							}
						}
					}
					y[((s*o+f)*oh+oy)*ow+ox] = acc
				}
			}
		}
	}
	return y
}

func TestConv2dMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range convCases {
		t.Run(tc.name, func(t *testing.T) {
			inputs, _ := convInputs(rng, tc)
			r, err := opstest.Eval(conv2dFunc(tc), inputs, nil, tensor.Float64, 1)
			if err != nil {
				t.Fatal(err)
			}
			var b []float64
			if tc.bias {
				b = inputs[2].Data().([]float64)
			}
			want := naiveConv2d(inputs[0].Data().([]float64), inputs[1].Data().([]float64), b, tc.x, tc.w, tc.stride, tc.pad)
			if len(r.Out) != len(want) {
				t.Fatalf("got %d outputs, want %d", len(r.Out), len(want))
			}
			for i := range want {
				if math.Abs(r.Out[i]-want[i]) > 1e-12 {
					t.Fatalf("output %d: got %v, want %v", i, r.Out[i], want[i])
				}
			}
		})
	}
}

func TestConv2dHandValues(t *testing.T) {
	// x is the 3×3 image 1…9.
	x := tensor.New(tensor.WithShape(1, 1, 3, 3), tensor.WithBacking([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}))
	for _, tc := range []struct {
		name        string
		w           *tensor.Dense
		b           []float64
		stride, pad int
		want        []float64
	}{
		// [1 2; 3 4] over each 2×2 window, plus 0.5: 1·1+2·2+3·4+4·5 = 37, …
		{"valid", tensor.New(tensor.WithShape(1, 1, 2, 2), tensor.WithBacking([]float64{1, 2, 3, 4})),
			[]float64{0.5}, 1, 0, []float64{37.5, 47.5, 67.5, 77.5}},
		// A 3×3 box filter centred on (0,0), (0,2), (2,0), (2,2) with zero padding:
		// 1+2+4+5, 2+3+5+6, 4+5+7+8, 5+6+8+9.
		{"padded stride 2", tensor.New(tensor.WithShape(1, 1, 3, 3), tensor.WithBacking([]float64{1, 1, 1, 1, 1, 1, 1, 1, 1})),
			nil, 2, 1, []float64{12, 16, 24, 28}},
		// Two filters: the centre tap and the right-hand neighbour minus the pixel.
		{"two filters", tensor.New(tensor.WithShape(2, 1, 1, 2), tensor.WithBacking([]float64{1, 0, -1, 1})),
			nil, 1, 0, []float64{1, 2, 4, 5, 7, 8, 1, 1, 1, 1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inputs := []*tensor.Dense{x, tc.w}
			if tc.b != nil {
				inputs = append(inputs, tensor.New(tensor.WithShape(len(tc.b)), tensor.WithBacking(tc.b)))
			}
			r, err := opstest.Eval(func(g *gorgonia.ExprGraph, in []*gorgonia.Node) (*gorgonia.Node, error) {
				var b *gorgonia.Node
				if len(in) > 2 {
					b = in[2]
				}
				return ops.Conv2d(in[0], in[1], b, tc.stride, tc.pad)
			}, inputs, nil, tensor.Float64, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Out) != len(tc.want) {
				t.Fatalf("got %v, want %v", r.Out, tc.want)
			}
			for i := range tc.want {
				if r.Out[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", r.Out, tc.want)
				}
			}
		})
	}
}

func TestConv2dRejectsBadShapes(t *testing.T) {
	g := gorgonia.NewGraph()
	node := func(name string, shape ...int) *gorgonia.Node {
		return gorgonia.NewTensor(g, tensor.Float64, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name))
	}
	x := node("x", 1, 3, 4, 4)
	for _, tc := range []struct {
		name        string
		w, b        *gorgonia.Node
		stride, pad int
	}{
		{"channels", node("w1", 2, 2, 3, 3), nil, 1, 1},
		{"kernel too big", node("w2", 2, 3, 7, 7), nil, 1, 1},
		{"stride 0", node("w3", 2, 3, 3, 3), nil, 0, 1},
		{"negative pad", node("w4", 2, 3, 3, 3), nil, 1, -1},
		{"bias", node("w5", 2, 3, 3, 3), node("b5", 3), 1, 1},
		{"3-D weight", node("w6", 2, 3, 3), nil, 1, 1},
	} {
		if _, err := ops.Conv2d(x, tc.w, tc.b, tc.stride, tc.pad); err == nil {
			t.Errorf("%s: expected an error", tc.name)
		}
	}
}
