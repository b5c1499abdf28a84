package train

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
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
	if after.Model.ImageSize != 56 || after.Model.NumTokens() != 197 {
		t.Fatalf("fine-tuned model %+v", after.Model)
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
		case isHead(p.Name):
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
	mc := ck.Model
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
