package train

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
)

// loadConfig is what vit-train train makes of --config and --set: the
// defaults with the file at path and the settings layered on, validated.
func loadConfig(path string, sets []string) (Config, error) {
	c, err := DefaultConfig().Layer(path, sets)
	if err != nil {
		return Config{}, err
	}
	return c, c.Validate()
}

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
	cfg, err := loadConfig(p, []string{"optim.lr=5e-4", "data.batch_size=32", "ema.enabled=true"})
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
	if cfg, err = loadConfig("", []string{"optim.lr=1"}); err != nil || cfg.Optim.LR != 1 {
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
		{"", []string{"sched.name=linear"}, `sched.name = "linear": want cosine, step or constant`},
		{"", []string{"epochs.x=1"}, `key "epochs" is not a mapping`},
		{"data:\n  batch_size: 64\nmodel:\n  vit:\n    patch_size: 2\n", nil, `line 4: unknown key "model.vit"`},
		{"model:\n  spec:\n    vit:\n      name: vit_fmnist_patch4_28\n      patch_sise: 2\n", nil,
			`model.spec.vit: unknown field "patch_sise"`},
		{"", []string{`model.spec={"vit": {"name": "other"}}`}, `model.spec.vit.name = "other" differs from model.name = "vit_fmnist_patch4_28"`},
		{"", []string{`model.spec={"vitt": {"name": "vit_fmnist_patch4_28"}}`}, `model.spec.vitt: architecture "vitt" is not registered`},
		{"", []string{`model.spec={"vit": {"name": "vit_fmnist_patch4_28"}, "resnet": {"arch": "resnet20"}}`}, `model.spec: want one architecture's configuration, got 2`},
		{"", []string{"model.name=resnet20", "model.distilled=true"}, `model resnet20: patch_size, embed_dim, depth, num_heads, mlp_ratio and distilled apply to ViTs only`},
		{"", []string{"model.patch_size=3"}, `patch_size 3 does not divide img_size 28`},
		{"", []string{"model.num_heads=3"}, `num_heads 3 does not divide embed_dim 64`},
		{"", []string{"model.depth=-1"}, `must not be negative`},
		{"", []string{"model.name=resnet20", "model.patch_size=2"}, `model resnet20: patch_size, embed_dim, depth, num_heads, mlp_ratio and distilled apply to ViTs only`},
	} {
		path := ""
		if tc.file != "" {
			path = writeFile(t, "c.yaml", tc.file)
		}
		_, err := loadConfig(path, tc.sets)
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
		if _, err := loadConfig(f, nil); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestResolvedConfigRoundTrips(t *testing.T) {
	cfg, err := loadConfig("", []string{"epochs=3", "optim.name=sgd"})
	if err != nil {
		t.Fatal(err)
	}
	y, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back, err := loadConfig(writeFile(t, "resolved.yaml", string(y)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, cfg) {
		t.Fatalf("resolved config does not load back the same:\n%+v\n%+v", back, cfg)
	}
}

// A setting that the rest of the configuration ignores is an error naming
// the key; the same setting where it takes effect is accepted.
func TestIneffectiveSettingsAreErrors(t *testing.T) {
	for _, c := range []struct {
		key       string
		ignored   []string // sets under which key has no effect
		effective []string // sets under which it has
	}{
		{"aug.hflip", []string{"aug.hflip=1"}, []string{"aug.hflip=1", "aug.train=padcrop-flip"}},
		{"aug.color_jitter", []string{"aug.color_jitter=0.4"}, []string{"aug.color_jitter=0.4", "aug.train=rrc-flip"}},
		{"aug.auto_augment", []string{"aug.auto_augment=rand-m9-mstd0.5"}, []string{"aug.auto_augment=rand-m9-mstd0.5", "aug.train=rrc-flip"}},
		{"aug.reprob", []string{"aug.reprob=0.25"}, []string{"aug.reprob=0.25", "aug.train=padcrop-flip"}},
		{"aug.mixup_prob", []string{"aug.mixup_prob=0.5"}, []string{"aug.mixup_prob=0.5", "aug.cutmix=1"}},
		{"aug.mixup_switch_prob", []string{"aug.mixup_switch_prob=0.2", "aug.mixup=0.8"}, []string{"aug.mixup_switch_prob=0.2", "aug.mixup=0.8", "aug.cutmix=1"}},
		{"ema.decay", []string{"ema.decay=0.99"}, []string{"ema.decay=0.99", "ema.enabled=true"}},
		{"distill.alpha", []string{"distill.alpha=0.3"}, []string{"distill.alpha=0.3", "distill.type=hard", "distill.teacher=t.safetensors"}},
		{"distill.tau", []string{"distill.tau=3", "distill.type=hard", "distill.teacher=t.safetensors"}, []string{"distill.tau=3", "distill.type=soft", "distill.teacher=t.safetensors"}},
		{"distill.per_batch", []string{"distill.per_batch=true"}, []string{"distill.per_batch=true", "distill.type=soft", "distill.teacher=t.safetensors"}},
		{"optim.momentum", []string{"optim.momentum=0.8"}, []string{"optim.momentum=0.8", "optim.name=sgd"}},
		{"optim.nesterov", []string{"optim.nesterov=true"}, []string{"optim.nesterov=true", "optim.name=sgd"}},
		{"optim.nesterov", []string{"optim.nesterov=true", "optim.name=sgd", "optim.momentum=0"}, []string{"optim.name=sgd", "optim.momentum=0"}},
		{"optim.beta1", []string{"optim.beta1=0.8", "optim.name=sgd"}, []string{"optim.beta1=0.8"}},
		{"optim.beta2", []string{"optim.beta2=0.99", "optim.name=sgd"}, []string{"optim.beta2=0.99"}},
		{"optim.eps", []string{"optim.eps=1e-6", "optim.name=sgd"}, []string{"optim.eps=1e-6"}},
		{"optim.layer_decay", []string{"optim.layer_decay=0.75", "init.from=x.safetensors", "init.freeze_backbone=true"}, []string{"optim.layer_decay=0.75", "init.from=x.safetensors"}},
		{"sched.min_lr", []string{"sched.min_lr=0", "sched.name=step"}, []string{"sched.min_lr=0"}},
		{"sched.decay_epochs", []string{"sched.decay_epochs=2"}, []string{"sched.decay_epochs=2", "sched.name=step"}},
		{"sched.decay_rate", []string{"sched.decay_rate=0.5", "sched.name=constant"}, []string{"sched.decay_rate=0.5", "sched.name=step"}},
		{"sched.warmup_lr", []string{"sched.warmup_lr=1e-4", "sched.warmup_epochs=0"}, []string{"sched.warmup_lr=1e-4"}},
		{"init.ema", []string{"init.ema=true"}, []string{"init.ema=true", "init.from=x.safetensors"}},
		{"data.root", []string{"data.root=/data"}, []string{"data.root=/data", "data.dataset=mnist"}},
		{"data.skip_corrupt", []string{"data.skip_corrupt=true"}, []string{"data.skip_corrupt=true", "data.dataset=imagefolder"}},
	} {
		_, err := loadConfig("", c.ignored)
		if err == nil || !strings.Contains(err.Error(), "config: "+c.key+" = ") || !strings.Contains(err.Error(), "has no effect") {
			t.Errorf("%v: want an error naming %s, got %v", c.ignored, c.key, err)
		}
		if _, err := loadConfig("", c.effective); err != nil {
			t.Errorf("%v: %v", c.effective, err)
		}
	}
	// Evaluating a checkpoint on other data does not check training settings.
	cfg := DefaultConfig()
	if _, err := evalConfig(cfg, []string{"data.root=/data"}); err != nil {
		t.Errorf("evalConfig: %v", err)
	}
}

func TestShapeOverridesChangeAPreset(t *testing.T) {
	for _, tc := range []struct {
		sets                                  []string
		patch, dim, depth, heads, mlp, tokens int
	}{
		{nil, 4, 64, 4, 4, 128, 50},
		{[]string{"model.patch_size=2"}, 2, 64, 4, 4, 128, 197},
		{[]string{"model.img_size=14", "model.patch_size=2"}, 2, 64, 4, 4, 128, 50},
		{[]string{"model.depth=6", "model.num_heads=8"}, 4, 64, 6, 8, 128, 50},
		// embed_dim alone keeps the preset's MLP ratio (2); mlp_ratio sets it.
		{[]string{"model.embed_dim=96"}, 4, 96, 4, 4, 192, 50},
		{[]string{"model.embed_dim=96", "model.mlp_ratio=4"}, 4, 96, 4, 4, 384, 50},
		{[]string{"model.mlp_ratio=1.5"}, 4, 64, 4, 4, 96, 50},
	} {
		cfg, err := loadConfig("", tc.sets)
		if err != nil {
			t.Fatalf("%v: %v", tc.sets, err)
		}
		spec, err := cfg.ModelSpec()
		if err != nil {
			t.Fatalf("%v: %v", tc.sets, err)
		}
		c := spec.Config.(vit.Config)
		if c.PatchSize != tc.patch || c.EmbedDim != tc.dim || c.Depth != tc.depth || c.Heads != tc.heads ||
			c.MLPDim != tc.mlp || c.NumTokens() != tc.tokens {
			t.Errorf("%v: got patch %d, dim %d, depth %d, heads %d, mlp %d, %d tokens; want %d, %d, %d, %d, %d, %d",
				tc.sets, c.PatchSize, c.EmbedDim, c.Depth, c.Heads, c.MLPDim, c.NumTokens(),
				tc.patch, tc.dim, tc.depth, tc.heads, tc.mlp, tc.tokens)
		}
	}
}

// TestEveryOverrideIsASetting sets each field of model.Overrides as
// model.KEY and finds it in the configuration the model is built from.
func TestEveryOverrideIsASetting(t *testing.T) {
	var o model.Overrides
	for i, f := range o.Fields() {
		value := map[string]string{"int": "3", "float64": "0.25", "bool": "true"}[reflect.TypeOf(f.Get()).String()]
		cfg, err := DefaultConfig().Layer("", []string{"model." + f.Key + "=" + value})
		if err != nil {
			t.Fatalf("model.%s: %v", f.Key, err)
		}
		if got := cfg.Model.Overrides.Fields()[i]; fmt.Sprint(got.Get()) != value {
			t.Errorf("model.%s=%s sets %s", f.Key, value, got)
		}
	}
}
