package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// newParam returns a parameter of the given shape with values uniform in
// [-1, 1) and a zero gradient buffer.
func newParam(rng *rand.Rand, name string, shape ...int) Param {
	n := 1
	for _, d := range shape {
		n *= d
	}
	p := Param{Name: name, Shape: shape, Data: make([]float32, n)}
	for i := range p.Data {
		p.Data[i] = float32(rng.Float64()*2 - 1)
	}
	return p
}

// randomGrads returns fresh gradients shaped like params, uniform in
// [-scale, scale).
func randomGrads(rng *rand.Rand, params []Param, scale float64) [][]float32 {
	out := make([][]float32, len(params))
	for i, p := range params {
		out[i] = make([]float32, len(p.Data))
		for j := range out[i] {
			out[i][j] = float32((rng.Float64()*2 - 1) * scale)
		}
	}
	return out
}

func toF64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

func snapshot(params []Param) [][]float64 {
	out := make([][]float64, len(params))
	for i, p := range params {
		out[i] = toF64(p.Data)
	}
	return out
}

// assertClose fails unless |got−want| ≤ tol·max(1, |want|) elementwise.
func assertClose(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: len %d, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		if d := math.Abs(float64(got[i]) - want[i]); !(d <= tol*math.Max(1, math.Abs(want[i]))) {
			if bad < 5 {
				t.Errorf("%s[%d] = %.9g, want %.9g (diff %.3g)", what, i, got[i], want[i], d)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d elements differ", what, bad, len(got))
	}
}

// bigParams returns a parameter list large enough to span several work units,
// mixing split tensors and packed small ones.
func bigParams(rng *rand.Rand) []Param {
	return []Param{
		newParam(rng, "a.weight", 3, grain+5),
		newParam(rng, "a.bias", 7),
		newParam(rng, "b.weight", 11, 13),
		newParam(rng, "c.weight", 2*grain-3, 1, 1),
		newParam(rng, "c.bias", 1),
	}
}

// vitBParams lists the ViT-B/16 parameters (86.6M values, timm names) with
// zeroed data and gradients.
func vitBParams() []Param {
	const d, hidden, depth, tokens, classes = 768, 3072, 12, 197, 1000
	var ps []Param
	add := func(name string, shape ...int) {
		n := 1
		for _, s := range shape {
			n *= s
		}
		ps = append(ps, Param{Name: name, Shape: shape, Data: make([]float32, n)})
	}
	add("cls_token", 1, 1, d)
	add("pos_embed", 1, tokens, d)
	add("patch_embed.proj.weight", d, 3, 16, 16)
	add("patch_embed.proj.bias", d)
	for k := range depth {
		b := fmt.Sprintf("blocks.%d.", k)
		add(b+"norm1.weight", d)
		add(b+"norm1.bias", d)
		add(b+"attn.qkv.weight", 3*d, d)
		add(b+"attn.qkv.bias", 3*d)
		add(b+"attn.proj.weight", d, d)
		add(b+"attn.proj.bias", d)
		add(b+"norm2.weight", d)
		add(b+"norm2.bias", d)
		add(b+"mlp.fc1.weight", hidden, d)
		add(b+"mlp.fc1.bias", hidden)
		add(b+"mlp.fc2.weight", d, hidden)
		add(b+"mlp.fc2.bias", d)
	}
	add("norm.weight", d)
	add("norm.bias", d)
	add("head.weight", classes, d)
	add("head.bias", classes)
	return ps
}

func numValues(params []Param) int {
	n := 0
	for _, p := range params {
		n += len(p.Data)
	}
	return n
}

// vitNoDecayNames is the no-weight-decay set a ViT supplies (timm's
// VisionTransformer.no_weight_decay(), plus DeiT's dist_token).
var vitNoDecayNames = []string{"pos_embed", "cls_token", "dist_token"}

// DefaultAdamWConfig returns torch.optim.AdamW's betas and eps with
// DeiT's weight decay: β1 0.9, β2 0.999, eps 1e-8, weight decay 0.05.
func DefaultAdamWConfig() AdamWConfig {
	return AdamWConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.05}
}

// DefaultSGDConfig returns timm's "sgd" optimizer settings (Nesterov
// momentum 0.9) with DeiT's weight decay 0.05.
func DefaultSGDConfig() SGDConfig {
	return SGDConfig{Momentum: 0.9, Nesterov: true, WeightDecay: 0.05}
}
