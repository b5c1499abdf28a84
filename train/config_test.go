package train

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigLayering(t *testing.T) {
	p := writeFile(t, "c.yaml", "epochs: 7\noptim:\n  lr: 0.002\n  weight_decay: 0.1\naug:\n  smoothing: 0.1\n")
	cfg, err := LoadConfig(p, []string{"optim.lr=5e-4", "data.batch_size=32", "ema.enabled=true"})
	if err != nil {
		t.Fatal(err)
	}
	def := DefaultConfig()
	if cfg.Epochs != 7 || cfg.Optim.LR != 5e-4 || cfg.Optim.WeightDecay != 0.1 || cfg.Data.BatchSize != 32 ||
		!cfg.EMA.Enabled || cfg.Aug.Smoothing != 0.1 {
		t.Fatalf("layering gave %+v", cfg)
	}
	if cfg.Optim.Beta2 != def.Optim.Beta2 || cfg.Model.Name != def.Model.Name {
		t.Fatal("defaults not kept for keys the file does not set")
	}
	// An integer is accepted where a number is expected.
	if cfg, err = LoadConfig("", []string{"optim.lr=1"}); err != nil || cfg.Optim.LR != 1 {
		t.Fatalf("lr=1: %v %v", cfg.Optim.LR, err)
	}
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		file string
		sets []string
		want string
	}{
		{"optim:\n  lrr: 0.1\n", nil, `unknown key "optim.lrr"`},
		{"epochz: 3\n", nil, `unknown key "epochz"`},
		{"epochs: three\n", nil, `key "epochs": want an integer, got three`},
		{"", []string{"optim.lr=fast"}, `--set optim.lr: key "optim.lr": want a number, got fast`},
		{"", []string{"data.workers=1.5"}, `key "data.workers": want an integer`},
		{"", []string{"nokey"}, `want key=value`},
		{"", []string{"optim.lr=-0.1"}, `optim.lr = -0.1: must be positive`},
		{"", []string{"model.img_size=30"}, `patch_size 4 does not divide img_size 30`},
		{"", []string{"model.name=vit_nope"}, `unknown model "vit_nope"`},
		{"", []string{"sched.name=linear"}, `sched.name = linear: want cosine, step or constant`},
		{"", []string{"epochs.x=1"}, `key "epochs" is not a mapping`},
	} {
		path := ""
		if tc.file != "" {
			path = writeFile(t, "c.yaml", tc.file)
		}
		_, err := LoadConfig(path, tc.sets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("file %q sets %v: want error containing %q, got %v", tc.file, tc.sets, tc.want, err)
		}
	}
}

func TestShippedConfigsLoad(t *testing.T) {
	files, err := filepath.Glob("../configs/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no configs/*.yaml found")
	}
	for _, f := range files {
		if _, err := LoadConfig(f, nil); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestResolvedConfigRoundTrips(t *testing.T) {
	cfg, err := LoadConfig("", []string{"epochs=3", "optim.name=sgd"})
	if err != nil {
		t.Fatal(err)
	}
	y, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back, err := LoadConfig(writeFile(t, "resolved.yaml", string(y)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if back != cfg {
		t.Fatalf("resolved config does not load back the same:\n%+v\n%+v", back, cfg)
	}
}
