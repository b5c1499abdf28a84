package vit

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/ops"
)

// tiny is a small configuration exercising every part of the graph.
func tiny(distilled bool) Config {
	return Config{Name: "tiny", ImageSize: 8, PatchSize: 4, Channels: 2, NumClasses: 3, EmbedDim: 8, Depth: 2,
		Heads: 2, MLPDim: 12, LayerNormEps: 1e-6, QKVBias: true, Distilled: distilled}
}

// lossStep builds a training step with soft-target cross-entropy on random
// images and labels (plus soft distillation against random teacher logits
// for a distilled model).
func lossStep(t *testing.T, m *ViT, batch int, training bool, seed uint64) *nn.Step {
	return lossStepCheckpointed(t, m, batch, training, seed, false)
}

// lossStepCheckpointed is lossStep with gradient checkpointing on or off.
func lossStepCheckpointed(t *testing.T, m *ViT, batch int, training bool, seed uint64, checkpointing bool) *nn.Step {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	g, err := m.BuildGraph(batch, training, ops.NewRandomness(seed))
	if err != nil {
		t.Fatal(err)
	}
	g.GradCheckpointing = checkpointing
	targets, td := g.Input("targets", batch, m.Config.NumClasses)
	fill := func(v any) {
		switch d := v.(type) {
		case []float32:
			for i := range d {
				d[i] = float32(rng.NormFloat64())
			}
		case []float64:
			for i := range d {
				d[i] = rng.NormFloat64()
			}
		}
	}
	fill(g.ImageData)
	oneHot(td, rng)
	loss, err := ops.SoftTargetCrossEntropy(g.Logits, targets)
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.Distilled {
		teacher, tl := g.Input("teacher", batch, m.Config.NumClasses)
		fill(tl.Data())
		kd, err := ops.DistillKL(g.DistLogits, teacher, 2, false)
		if err != nil {
			t.Fatal(err)
		}
		if loss, err = ops.Combine([]float64{0.5, 0.5}, loss, kd); err != nil {
			t.Fatal(err)
		}
	}
	s, err := g.Differentiate(loss)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func oneHot(t *tensor.Dense, rng *rand.Rand) {
	s := t.Shape()
	for b := 0; b < s[0]; b++ {
		y := rng.IntN(s[1])
		for c := 0; c < s[1]; c++ {
			v := 0.0
			if c == y {
				v = 1
			}
			switch d := t.Data().(type) {
			case []float32:
				d[b*s[1]+c] = float32(v)
			case []float64:
				d[b*s[1]+c] = v
			}
		}
	}
}

// TestEveryPresetTrains builds every preset at a small input size, runs a
// training step and checks that every parameter receives a finite, non-zero
// gradient.
func TestEveryPresetTrains(t *testing.T) {
	for _, name := range Presets() {
		cfg, err := Preset(name, model.Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		// Shrink depth and width, keeping the preset's structure (patch,
		// prefix tokens, head layout), so that every preset fits a test.
		cfg.ImageSize = 2 * cfg.PatchSize
		cfg.Depth = min(cfg.Depth, 2)
		cfg.EmbedDim = 4 * cfg.Heads / gcd(cfg.Heads, 4) * 2
		cfg.MLPDim = 2 * cfg.EmbedDim
		cfg.NumClasses = 5
		cfg.DropPathRate = 0.1
		m, err := New(cfg, 1)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s := lossStep(t, m, 2, true, 2)
		if err := s.Run(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if l := s.LossValue(); math.IsNaN(l) || math.IsInf(l, 0) {
			t.Fatalf("%s: loss %v", name, l)
		}
		for i, p := range m.Params {
			grad, err := s.Grad(i)
			if err != nil {
				t.Fatal(err)
			}
			nonzero := false
			for _, v := range grad {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("%s: %s has a non-finite gradient", name, p.Name)
				}
				nonzero = nonzero || v != 0
			}
			if !nonzero {
				t.Errorf("%s: %s receives no gradient", name, p.Name)
			}
			if len(grad) != p.Value.Shape().TotalSize() {
				t.Errorf("%s: %s: gradient of %d elements for %v", name, p.Name, len(grad), p.Value.Shape())
			}
		}
		// The trainer reads every gradient every step.
		if n := testing.AllocsPerRun(10, func() { _, _ = s.Grad(0) }); n != 0 {
			t.Errorf("%s: Grad allocates %v times per call", name, n)
		}
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// TestEvalGraphSharesParameters checks that evaluation graphs of another
// batch size see parameter updates and agree with the training graph's
// deterministic forward pass.
func TestEvalGraphSharesParameters(t *testing.T) {
	m, err := New(tiny(true), 5)
	if err != nil {
		t.Fatal(err)
	}
	train, err := m.BuildGraph(4, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	eval, err := m.BuildGraph(2, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for i, img := 0, train.ImageData.([]float32); i < len(img); i++ {
		img[i] = float32(rng.NormFloat64())
	}
	copy(eval.ImageData.([]float32), train.ImageData.([]float32)) // the first two images
	run := func() ([]float32, []float32) {
		if err := train.Run(); err != nil {
			t.Fatal(err)
		}
		if err := eval.Run(); err != nil {
			t.Fatal(err)
		}
		return train.Predictions(nil), eval.Predictions(nil)
	}
	a, b := run()
	for i := range b {
		if math.Abs(float64(a[i]-b[i])) > 1e-5 {
			t.Fatalf("logit %d: train graph %v, eval graph %v", i, a[i], b[i])
		}
	}
	// Change the head bias: both graphs move by the same amount (half of it,
	// since a distilled model averages its two heads).
	for i := range param(t, m, "head.bias").Float32s() {
		param(t, m, "head.bias").Float32s()[i] += 1
	}
	a2, b2 := run()
	for i := range b2 {
		if math.Abs(float64(b2[i]-b[i])-0.5) > 1e-5 || math.Abs(float64(a2[i]-a[i])-0.5) > 1e-5 {
			t.Fatalf("logit %d did not follow the parameter update: %v→%v, %v→%v", i, a[i], a2[i], b[i], b2[i])
		}
	}
}

// param returns m's parameter called name.
func param(t *testing.T, m *ViT, name string) *Param {
	t.Helper()
	i := slices.IndexFunc(m.Params, func(p *Param) bool { return p.Name == name })
	if i < 0 {
		t.Fatalf("model %s has no parameter %q", m.Config.Name, name)
	}
	return m.Params[i]
}

// TestInitialisation checks timm's initialisation statistics on ViT-S/16's shapes.
func TestInitialisation(t *testing.T) {
	cfg, _ := Preset("vit_fmnist_patch4_28", model.Overrides{})
	m, err := New(cfg, 42)
	if err != nil {
		t.Fatal(err)
	}
	std := func(x []float32) float64 {
		s, s2 := 0.0, 0.0
		for _, v := range x {
			s += float64(v)
			s2 += float64(v) * float64(v)
		}
		n := float64(len(x))
		return math.Sqrt(s2/n - (s/n)*(s/n))
	}
	if s := std(param(t, m, "blocks.0.mlp.fc1.weight").Float32s()); math.Abs(s-0.02) > 0.002 {
		t.Errorf("fc1 weight std %v, want 0.02", s)
	}
	for _, v := range param(t, m, "blocks.0.attn.qkv.bias").Float32s() {
		if v != 0 {
			t.Fatal("qkv bias must start at 0")
		}
	}
	for _, v := range param(t, m, "norm.weight").Float32s() {
		if v != 1 {
			t.Fatal("LayerNorm weight must start at 1")
		}
	}
	bound := 1 / math.Sqrt(16)
	for _, v := range param(t, m, "patch_embed.proj.weight").Float32s() {
		if math.Abs(float64(v)) > bound {
			t.Fatalf("patch_embed weight %v outside ±1/√fan_in", v)
		}
	}
	m2, _ := New(cfg, 42)
	a, b := param(t, m, "pos_embed").Float32s(), param(t, m2, "pos_embed").Float32s()
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("initialisation is not reproducible from the seed")
		}
	}
}

// TestFrozenEvalGraph checks nn.Graph.FreezeWeights on a distilled model:
// refused on a training graph; an evaluation graph's logits bit for bit
// those of an unfrozen one; every linear layer's weight packed (after
// all of them are changed in place the frozen graph still computes with
// the old ones); freezing anew follows the change.
func TestFrozenEvalGraph(t *testing.T) {
	c, err := Preset("deit_fmnist_distilled_patch4_28", model.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(c, 5)
	if err != nil {
		t.Fatal(err)
	}
	train, err := m.BuildGraph(2, true, ops.NewRandomness(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := train.FreezeWeights(); err == nil || !strings.Contains(err.Error(), "training graph") {
		t.Fatalf("FreezeWeights on a training graph: %v", err)
	}
	plain, err := m.BuildGraph(3, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	frozen, err := m.BuildGraph(3, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := frozen.FreezeWeights(); err != nil {
		t.Fatal(err)
	}
	if !frozen.Frozen() || plain.Frozen() || train.Frozen() {
		t.Fatalf("Frozen: %v, %v, %v; want true for the frozen graph only", frozen.Frozen(), plain.Frozen(), train.Frozen())
	}
	rng := rand.New(rand.NewPCG(2, 2))
	for i, img := 0, plain.ImageData.([]float32); i < len(img); i++ {
		img[i] = float32(rng.NormFloat64())
	}
	copy(frozen.ImageData.([]float32), plain.ImageData.([]float32))
	run := func(g *nn.Graph) []float32 {
		t.Helper()
		if err := g.Run(); err != nil {
			t.Fatal(err)
		}
		return g.Predictions(nil)
	}
	same := func(what string, got, want []float32) {
		t.Helper()
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: logit %d = %v, want %v", what, i, got[i], want[i])
			}
		}
	}
	before := run(plain)
	same("frozen", run(frozen), before)
	same("frozen, second run", run(frozen), before)

	changed := 0
	for _, p := range m.Params {
		if strings.HasSuffix(p.Name, ".weight") && p.Value.Dims() >= 2 {
			for i, w := range p.Float32s() {
				p.Float32s()[i] = -w
			}
			changed++
		}
	}
	if want := 2 + 4*c.Depth + 1; changed != want { // heads, patch embedding, four per block
		t.Fatalf("changed %d linear weights, want %d", changed, want)
	}
	after := run(plain)
	if math.Float32bits(after[0]) == math.Float32bits(before[0]) {
		t.Fatal("changing the weights left the logits as they were")
	}
	same("frozen, weights changed in place", run(frozen), before)
	if err := frozen.FreezeWeights(); err != nil {
		t.Fatal(err)
	}
	same("frozen anew", run(frozen), after)
}

// sameLogit reports whether a logit of a graph that computes the last
// block's prefix rows only is the whole block's: bit for bit with
// vit-train's own products, whose rounding of a row does not depend on
// how many rows there are; within float32 rounding with OpenBLAS's, whose
// kernels for a few rows sum in another order than those for many.
func sameLogit(got, want float32) bool {
	if blas.Backend() != "openblas" {
		return math.Float32bits(got) == math.Float32bits(want)
	}
	return math.Abs(float64(got-want)) <= 1e-5*max(1, math.Abs(float64(want)))
}

// TestEvalGraphComputesTheHeadsTokens checks that an evaluation graph's
// last block computes only the prefix tokens' rows, and that its logits
// are those of a float32 training graph without dropout, which computes
// every token's (sameLogit: bit for bit with vit-train's own products).
func TestEvalGraphComputesTheHeadsTokens(t *testing.T) {
	for _, distilled := range []bool{false, true} {
		cfg := tiny(distilled)
		cfg.Depth = 3
		m, err := New(cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		train, err := m.BuildGraph(3, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		eval, err := m.BuildGraph(3, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		prefix := 1
		if distilled {
			prefix = 2
		}
		for _, g := range []struct {
			name   string
			g      *nn.Graph
			tokens int
		}{{"training", train, cfg.NumTokens()}, {"evaluation", eval, prefix}} {
			if got, want := g.g.Blocks[len(g.g.Blocks)-1].Output.Shape(), (tensor.Shape{3, g.tokens, cfg.EmbedDim}); !got.Eq(want) {
				t.Fatalf("distilled=%v: the %s graph's last block gives %v, want %v", distilled, g.name, got, want)
			}
		}
		rng := rand.New(rand.NewPCG(2, 2))
		for i, img := 0, train.ImageData.([]float32); i < len(img); i++ {
			img[i] = float32(rng.NormFloat64())
		}
		copy(eval.ImageData.([]float32), train.ImageData.([]float32))
		for _, g := range []*nn.Graph{train, eval} {
			if err := g.Run(); err != nil {
				t.Fatal(err)
			}
		}
		want, got := train.Predictions(nil), eval.Predictions(nil)
		for i := range want {
			if !sameLogit(got[i], want[i]) {
				t.Fatalf("distilled=%v: logit %d is %v, the whole block's %v (%s products)", distilled, i, got[i], want[i], blas.Backend())
			}
		}
	}
}

// TestTrainingStepMergesBlockInputGradients checks that a training step
// computes the gradient of each value a block's LayerNorm reads, the sum
// of that LayerNorm's input gradient and the residual connection's, in
// LayerNorm's backward op, with or without gradient checkpointing: only
// the final norm's input gradient, which its input's alone, runs on its
// own.
func TestTrainingStepMergesBlockInputGradients(t *testing.T) {
	for _, checkpointing := range []bool{false, true} {
		cfg := tiny(false)
		cfg.Depth = 3
		m, err := New(cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		s := lossStepCheckpointed(t, m, 2, true, 1, checkpointing)
		times, err := s.TimeOps()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(); err != nil {
			t.Fatal(err)
		}
		calls := make(map[string]int)
		for _, o := range times.ByOp() {
			calls[o.Op] += o.Calls
		}
		if calls["LayerNormGradInput"] != 1 || calls["LayerNormGradInput+Add"] != 2*cfg.Depth {
			t.Errorf("checkpointing=%v: LayerNorm input gradients %d on their own and %d merged, want 1 and %d", checkpointing, calls["LayerNormGradInput"], calls["LayerNormGradInput+Add"], 2*cfg.Depth)
		}
	}
}
