package train

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
)

// TestFinetuneAtHigherResolution trains at 28 px, then fine-tunes at 56 px
// with a new 10-class head and a frozen backbone: pos_embed is resampled,
// the backbone stays bit-identical and the head changes.
func TestFinetuneAtHigherResolution(t *testing.T) {
	base := t.TempDir()
	if _, err := Run(context.Background(), smallConfig(t, "epochs=1"), Options{Dir: base}); err != nil {
		t.Fatal(err)
	}
	from := filepath.Join(base, LastCheckpoint)
	cfg := smallConfig(t, "epochs=1", "model.img_size=56", "init.from="+from, "init.freeze_backbone=true",
		"data.train_subset=128", "data.eval_subset=100")
	dir := t.TempDir()
	var log strings.Builder
	if _, err := Run(context.Background(), cfg, Options{Dir: dir, Out: &log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "resampled pos_embed from a 7×7 to a 14×14 patch grid") ||
		!strings.Contains(log.String(), "backbone frozen") {
		t.Fatalf("log lacks the resampling and freezing notes:\n%s", log.String())
	}
	before, err := LoadCheckpoint(from)
	if err != nil {
		t.Fatal(err)
	}
	after, err := LoadCheckpoint(filepath.Join(dir, LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if after.Spec.Config.(vit.Config).ImageSize != 56 || after.Spec.Config.(vit.Config).NumTokens() != 197 {
		t.Fatalf("fine-tuned model %+v", after.Spec.Config.(vit.Config))
	}
	net, err := model.New(after.Spec, 0)
	if err != nil {
		t.Fatal(err)
	}
	old := map[string][]float32{}
	for _, p := range before.Params {
		old[p.Name] = p.Data
	}
	headChanged := false
	for _, p := range after.Params {
		switch {
		case p.Name == "pos_embed":
			if len(p.Data) != 197*64 {
				t.Fatalf("pos_embed has %d values", len(p.Data))
			}
			for i := 0; i < 64; i++ { // the cls row is kept as it is
				if p.Data[i] != old[p.Name][i] {
					t.Fatal("the cls row of pos_embed changed")
				}
			}
		case net.Spec().Config.IsHead(p.Name):
			for i := range p.Data {
				headChanged = headChanged || p.Data[i] != old[p.Name][i]
			}
		default:
			for i := range p.Data {
				if p.Data[i] != old[p.Name][i] {
					t.Fatalf("frozen %s changed", p.Name)
				}
			}
		}
	}
	if !headChanged {
		t.Fatal("the head did not train")
	}
}

func TestFinetuneNewClassCount(t *testing.T) {
	base := t.TempDir()
	if _, err := Run(context.Background(), smallConfig(t, "epochs=1", "data.train_subset=128"), Options{Dir: base}); err != nil {
		t.Fatal(err)
	}
	ck, err := LoadCheckpoint(filepath.Join(base, LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	mc := ck.Spec.Config.(vit.Config)
	mc.NumClasses = 7
	m, err := newModel(mc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ck.LoadWeights(m, false); err == nil || !strings.Contains(err.Error(), "head.weight") {
		t.Fatalf("loading a 10-class head into a 7-class model must fail naming head.weight, got %v", err)
	}
	if _, err := ck.LoadWeights(m, true); err != nil {
		t.Fatalf("with a new head: %v", err)
	}
}

// TestResNetWithEMALayerDecayAndInitFrom fine-tunes a ResNet from a ResNet
// checkpoint with EMA and layer decay: the weights start from the
// checkpoint, and the EMA weights are evaluated, saved and loadable.
func TestResNetWithEMALayerDecayAndInitFrom(t *testing.T) {
	from := tinyResNet(t)
	cfg := smallConfig(t, "model.name=resnet20", "model.drop_path_rate=0", "epochs=1", "data.train_subset=64", "data.batch_size=16",
		"data.eval_subset=64", "data.eval_batch_size=32", "optim.name=sgd", "optim.lr=0.01", "optim.layer_decay=0.5",
		"ema.enabled=true", "ema.decay=0.9", "init.from="+from)
	dir := t.TempDir()
	var log strings.Builder
	sum, err := Run(context.Background(), cfg, Options{Dir: dir, Out: &log})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "initialised from "+from) || sum.EMA == nil {
		t.Fatalf("EMA result %v, log:\n%s", sum.EMA, log.String())
	}
	ck, err := LoadCheckpoint(filepath.Join(dir, LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	net, err := model.New(ck.Spec, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ck.EMA) != len(net.Params()) {
		t.Fatalf("%d EMA tensors for %d parameters", len(ck.EMA), len(net.Params()))
	}
	if _, _, err := OpenNetwork(filepath.Join(dir, LastCheckpoint), NetworkOptions{EMA: true}); err != nil {
		t.Fatalf("opening the EMA weights: %v", err)
	}
}

// TestFinetuneRecipeKeepsAConvergedModelsAccuracy trains a small model to
// the end of its schedule, then fine-tunes it at the same resolution with
// FinetuneConfig, as `vit-train finetune` without --config does: its
// top-1 must not fall. The recipe the shipped fine-tuning config used
// before (SGD at lr 0.01 for a batch of 64, layer decay 0.75, pad-crop +
// flip) is the control, and must lower it: the test tells a harmful
// recipe from a harmless one.
func TestFinetuneRecipeKeepsAConvergedModelsAccuracy(t *testing.T) {
	data := []string{"data.train_subset=5000", "data.eval_subset=1000", "data.eval_batch_size=250", "progress=false"}
	base := t.TempDir()
	sum, err := Run(context.Background(), smallConfig(t, append(data, "epochs=5", "sched.warmup_epochs=0.3", "model.drop_path_rate=0")...), Options{Dir: base})
	if err != nil {
		t.Fatal(err)
	}
	converged := sum.Last.Top1
	finetune := func(sets ...string) float64 {
		t.Helper()
		cfg, err := FinetuneConfig().Layer("", append(append(data, "init.from="+filepath.Join(base, LastCheckpoint)), sets...))
		if err == nil {
			err = cfg.Validate()
		}
		if err != nil {
			t.Fatal(err)
		}
		sum, err := Run(context.Background(), cfg, Options{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return sum.Last.Top1
	}
	const tolerance = 0.3 // points: 3 of the 1,000 test images
	kept := finetune()
	if kept < converged-tolerance {
		t.Errorf("fine-tuning with FinetuneConfig lowered top-1 from %.2f%% to %.2f%%", converged, kept)
	}
	harmful := finetune("optim.lr=0.01", "optim.scale_lr=false", "optim.layer_decay=0.75", "aug.train=padcrop-flip")
	if harmful > converged-2 {
		t.Errorf("control: the former recipe gave %.2f%% from %.2f%%; a drop of 2 points or more was expected", harmful, converged)
	}
	t.Logf("converged %.2f%%, FinetuneConfig %.2f%%, former recipe %.2f%%", converged, kept, harmful)
}
