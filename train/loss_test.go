package train

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/distill"
	"github.com/vit-train/vit-train/internal/gradcheck"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
)

// logSoftmax returns log_softmax(z/tau) of one row, in float64.
func logSoftmax(z []float32, tau float64) []float64 {
	m := math.Inf(-1)
	for _, v := range z {
		m = math.Max(m, float64(v)/tau)
	}
	s := 0.0
	for _, v := range z {
		s += math.Exp(float64(v)/tau - m)
	}
	out := make([]float64, len(z))
	for i, v := range z {
		out[i] = float64(v)/tau - m - math.Log(s)
	}
	return out
}

// wantDistillLoss evaluates DeiT's DistillationLoss for logits (B, C):
// base = mean_b −Σ_c t·log_softmax(z_cls); soft D = Σ p_t·(log p_t − log p_s)·τ²/(B·C)
// (or /B); hard D = mean_b −log_softmax(z_dist)[argmax z_t].
func wantDistillLoss(cls, dist, teacher, targets []float32, b, c int, d distill.Config) (base, kd, total float64) {
	for i := 0; i < b; i++ {
		r := func(x []float32) []float32 { return x[i*c : (i+1)*c] }
		ls := logSoftmax(r(cls), 1)
		for k, t := range r(targets) {
			base -= float64(t) * ls[k] / float64(b)
		}
		switch d.Type {
		case "soft":
			lt, ld := logSoftmax(r(teacher), d.Tau), logSoftmax(r(dist), d.Tau)
			for k := range lt {
				kd += math.Exp(lt[k]) * (lt[k] - ld[k])
			}
		case "hard":
			best := 0
			for k, v := range r(teacher) {
				if v > r(teacher)[best] {
					best = k
				}
			}
			kd -= logSoftmax(r(dist), 1)[best]
		}
	}
	switch {
	case d.Type == "hard":
		kd /= float64(b)
	case d.PerBatch:
		kd *= d.Tau * d.Tau / float64(b)
	default:
		kd *= d.Tau * d.Tau / float64(b*c)
	}
	return base, kd, (1-d.Alpha)*base + d.Alpha*kd
}

// oneBlock returns the preset with one encoder block.
func oneBlock(t *testing.T, preset string) *vit.ViT {
	t.Helper()
	mc, err := vit.Preset(preset, model.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	mc.Depth = 1
	m, err := vit.New(mc, 3)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDistillLossMatchesDeiT runs the training step of a distilled ViT
// with each distillation setting and checks the loss and its logged terms
// against DeiT's formula evaluated on the step's own logits.
func TestDistillLossMatchesDeiT(t *testing.T) {
	m := oneBlock(t, "deit_fmnist_distilled_patch4_28")
	const b, c = 4, 10
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range []distill.Config{
		{Type: "soft", Alpha: 0.5, Tau: 1},
		{Type: "soft", Alpha: 0.3, Tau: 3, PerBatch: true},
		{Type: "soft", Alpha: 0.7, Tau: 0.5},
		{Type: "hard", Alpha: 0.5, Tau: 1},
		{Type: "hard", Alpha: 1, Tau: 1},
	} {
		g, err := m.BuildGraph(b, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := newTrainingLoss(g, d)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(obj.Names, []string{"loss_base", "loss_distill"}) {
			t.Fatalf("logged terms %v", obj.Names)
		}
		for i, img := 0, g.ImageData.([]float32); i < len(img); i++ {
			img[i] = float32(rng.NormFloat64())
		}
		for i := range obj.Targets {
			obj.Targets[i] = 0.01
		}
		for i := 0; i < b; i++ {
			obj.Targets[i*c+i] = 0.91 // smoothed one-hot rows
		}
		for i := range obj.Teacher {
			obj.Teacher[i] = float32(3 * rng.NormFloat64())
		}
		if err := obj.Step.Run(); err != nil {
			t.Fatal(err)
		}
		cls, dist := g.HeadLogits(g.Logits, nil), g.HeadLogits(g.DistLogits, nil)
		base, kd, total := wantDistillLoss(cls, dist, obj.Teacher, obj.Targets, b, c, d)
		got := []float64{obj.Step.ExtraValue(0), obj.Step.ExtraValue(1), obj.Step.LossValue()}
		for i, want := range []float64{base, kd, total} {
			if math.Abs(got[i]-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Errorf("%+v: %s = %.7g, want %.7g", d, []string{"loss_base", "loss_distill", "loss"}[i], got[i], want)
			}
		}
		if kd <= 0 {
			t.Errorf("%+v: distillation term %v should be positive for random logits", d, kd)
		}
	}
}

func TestDistillNeedsADistilledModel(t *testing.T) {
	mc, _ := vit.Preset("vit_fmnist_patch4_28", model.Overrides{})
	m, _ := vit.New(mc, 0)
	g, err := m.BuildGraph(2, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newTrainingLoss(g, distill.Config{Type: "hard", Alpha: 0.5, Tau: 1}); err == nil || !strings.Contains(err.Error(), "distillation head") {
		t.Fatalf("want an error about the missing distillation head, got %v", err)
	}
}

func TestTrainingLossNeedsAFloat32Graph(t *testing.T) {
	mc, err := vit.Preset("vit_fmnist_patch4_28", model.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := gradcheck.ViT(mc, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.BuildGraph(4, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newTrainingLoss(g, distill.DefaultConfig()); err == nil || !strings.Contains(err.Error(), "float32") {
		t.Errorf("newTrainingLoss on a float64 graph: want an error, got %v", err)
	}
}

func TestTrainingLossWithoutTeacher(t *testing.T) {
	for _, c := range []struct {
		preset string
		names  []string
	}{{"vit_fmnist_patch4_28", nil}, {"deit_fmnist_distilled_patch4_28", []string{"loss_cls", "loss_dist_head"}}} {
		m := oneBlock(t, c.preset)
		g, err := m.BuildGraph(2, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := newTrainingLoss(g, distill.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		if obj.Teacher != nil || !slices.Equal(obj.Names, c.names) || len(obj.Targets) != 2*m.Config.NumClasses {
			t.Errorf("%s: teacher %v, terms %v, %d targets", c.preset, obj.Teacher, obj.Names, len(obj.Targets))
		}
	}
}
