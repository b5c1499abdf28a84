package train

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/vit-train/vit-train/distill"
	"github.com/vit-train/vit-train/internal/layered"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/fmapeak"
)

// Config is a training run's configuration. Its YAML keys are the names
// used in configs/*.yaml and with --set (dotted for nested keys, e.g.
// optim.lr=5e-4).
type Config struct {
	Model    ModelConfig    `yaml:"model"`
	Init     InitConfig     `yaml:"init"`
	Data     DataConfig     `yaml:"data"`
	Aug      AugConfig      `yaml:"aug"`
	Optim    OptimConfig    `yaml:"optim"`
	Sched    SchedConfig    `yaml:"sched"`
	Distill  distill.Config `yaml:"distill"`
	Epochs   int            `yaml:"epochs"`
	Seed     uint64         `yaml:"seed"`
	EMA      EMAConfig      `yaml:"ema"`
	Ckpt     CkptConfig     `yaml:"checkpoint"`
	LogEvery int            `yaml:"log_every"`
	Progress bool           `yaml:"progress"`
	// TensorBoard writes the steps and epochs records and the resolved
	// configuration to events.out.tfevents.* files in the run folder.
	TensorBoard bool `yaml:"tensorboard"`
}

// ModelConfig picks a preset and overrides some of its fields.
type ModelConfig struct {
	Name string `yaml:"name"`
	// Overrides change the model's input, classes, regularisation and, for
	// a ViT, its shape (timm's create_model keyword arguments:
	// model.img_size, model.patch_size, …; model.Overrides lists them); 0
	// keeps the model's. With embed_dim alone, the MLP keeps the model's
	// width ratio; distilled gives a ViT preset DeiT's distillation token
	// and head.
	model.Overrides `yaml:",inline"`
	// Spec, when set, is the full configuration of the model named Name,
	// for a model that is not a preset (an imported one, fine-tuned): the
	// fields a checkpoint records, under the architecture's name, as in
	// {vit: {name: vit_plain, img_size: 224, patch_size: 16, …}}. It
	// replaces the preset lookup, and the fields above override it as they
	// override a preset. `vit-train finetune` sets it from the checkpoint.
	Spec map[string]map[string]any `yaml:"spec,omitempty"`
	// GradCheckpointing keeps only each encoder block's input between the
	// forward and the backward pass and recomputes the block's activations
	// in the backward pass (timm's set_grad_checkpointing): less memory for
	// about a third more compute. ViTs only.
	GradCheckpointing bool `yaml:"grad_checkpointing"`
	// Precision is the arithmetic of the matrix products (linear layers,
	// the patch embedding, attention's products, convolutions; forward and
	// backward) of training, evaluation, prediction and a distillation
	// teacher: fp32, or mixed for the fastest low-precision product the
	// processor has (blas.Mixed: bfloat16 or float16 operands, float32
	// sums). Weights, the optimiser, softmax, normalisations, losses and
	// reductions stay float32. Empty, as in checkpoints from before the
	// setting, is fp32.
	Precision string `yaml:"precision"`
}

// Products returns the arithmetic model.precision gives the matrix
// products. mixed on a processor with no low-precision product faster
// than float32 is an error naming the setting and the processor.
func (m ModelConfig) Products() (blas.Variant, error) {
	switch m.Precision {
	case "", "fp32":
		return blas.FP32, nil
	case "mixed":
		if v := blas.Mixed(); !v.IsFP32() {
			return v, nil
		}
		cpu, err := fmapeak.ReadProcessor()
		name := cpu.String()
		if err != nil {
			name = "this processor"
		}
		return "", fmt.Errorf("config: model.precision = mixed: %s has no low-precision matrix product faster than float32 (bf16 needs AVX512_BF16, fp16 AVX512_FP16, in the default build); set model.precision=fp32", name)
	}
	return "", fmt.Errorf("config: model.precision = %q: want fp32 or mixed", m.Precision)
}

// NewNetwork creates the network of spec, initialised from seed, its
// graphs running their products as m's model.precision says (Products).
// It is the one place model.precision takes effect: training, bench and
// every checkpoint's network (Checkpoint.Network) are built here.
func NewNetwork(spec model.Spec, seed uint64, m ModelConfig) (model.Network, error) {
	v, err := m.Products()
	if err != nil {
		return nil, err
	}
	net, err := model.New(spec, seed)
	if err != nil {
		return nil, err
	}
	net.SetPrecision(v)
	return net, nil
}

// InitConfig starts a run from a checkpoint's weights (fine-tuning).
type InitConfig struct {
	// From is the checkpoint whose weights initialise the model. pos_embed
	// is resampled when the image size differs; head and head_dist start
	// afresh when the class count differs.
	From string `yaml:"from"`
	// EMA takes the checkpoint's EMA weights instead of the trained ones.
	EMA bool `yaml:"ema"`
	// FreezeBackbone trains only head (and head_dist).
	FreezeBackbone bool `yaml:"freeze_backbone"`
}

// DataConfig selects the dataset and the loader's settings.
type DataConfig struct {
	// Dataset is one of fashion-mnist-embedded, fashion-mnist, mnist, cifar10,
	// cifar100, imagefolder, prepared (Root holding train.shard and
	// test.shard, written by `vit-train prepare`).
	Dataset       string `yaml:"dataset"`
	Root          string `yaml:"root"`
	BatchSize     int    `yaml:"batch_size"`
	EvalBatchSize int    `yaml:"eval_batch_size"`
	Workers       int    `yaml:"workers"`
	SkipCorrupt   bool   `yaml:"skip_corrupt"`
	// TrainSubset and EvalSubset, when above 0, train and evaluate on
	// that many images, drawn to cover the classes (data.Subset).
	TrainSubset int `yaml:"train_subset"`
	// RepeatedAug > 1 is DeiT's repeated augmentation (--repeated-aug,
	// RASampler; DeiT uses 3): each image of an epoch is trained this many
	// times, in copies augmented differently and spread over the ranks,
	// and an epoch holds (training images)//256·256 images in all. 0 or 1
	// is off.
	RepeatedAug int `yaml:"repeated_aug"`
	EvalSubset  int `yaml:"eval_subset"`
	// ValSplit > 0 holds out this fraction of the training set, drawn by
	// ValSeed (not by the run's seed, so that every seed of a sweep is
	// scored on the same images), and validates on it instead of on the
	// test set: tune on it, and evaluate the test set once (vit-train eval
	// --set data.val_split=0). The run folder lists the held-out images
	// (val_split.json). 0 is off.
	ValSplit float64 `yaml:"val_split"`
	ValSeed  uint64  `yaml:"val_seed"`
}

// EvalSet names the images that evaluations of this data score, for the
// lines that report them: "test", or, with data.val_split, "held-out".
func (c DataConfig) EvalSet() string {
	if c.ValSplit > 0 {
		return "held-out"
	}
	return "test"
}

// HeldOutNote says, with data.val_split, that evaluations score part of
// the training set rather than the test set; "" without it.
func (c DataConfig) HeldOutNote() string {
	if c.ValSplit == 0 {
		return ""
	}
	return fmt.Sprintf("held out of the training set by data.val_split = %v; the test set is not scored (data.val_split=0 scores it)", c.ValSplit)
}

// AugConfig is the augmentation recipe, with timm's names and meanings.
type AugConfig struct {
	// Train is the training pipeline: "padcrop-flip" (RandomCrop with
	// padding 4 + flip), "rrc-flip" (RandomResizedCrop + flip), or "none".
	Train string `yaml:"train"`
	// AutoAugment is a timm RandAugment string such as rand-m9-mstd0.5-inc1, or "".
	AutoAugment string  `yaml:"auto_augment"`
	HFlip       float64 `yaml:"hflip"`
	ColorJitter float64 `yaml:"color_jitter"`
	ReProb      float64 `yaml:"reprob"`
	Mixup       float64 `yaml:"mixup"`
	CutMix      float64 `yaml:"cutmix"`
	MixupProb   float64 `yaml:"mixup_prob"`
	SwitchProb  float64 `yaml:"mixup_switch_prob"`
	Smoothing   float64 `yaml:"smoothing"`
	CropPct     float64 `yaml:"crop_pct"`
}

// OptimConfig is the optimiser.
type OptimConfig struct {
	Name string  `yaml:"name"` // adamw or sgd
	LR   float64 `yaml:"lr"`
	// ScaleLR multiplies lr by batch_size/512, DeiT's rule.
	ScaleLR     bool    `yaml:"scale_lr"`
	WeightDecay float64 `yaml:"weight_decay"`
	Beta1       float64 `yaml:"beta1"`
	Beta2       float64 `yaml:"beta2"`
	Eps         float64 `yaml:"eps"`
	Momentum    float64 `yaml:"momentum"`
	Nesterov    bool    `yaml:"nesterov"`
	ClipGrad    float64 `yaml:"clip_grad"`
	LayerDecay  float64 `yaml:"layer_decay"`
	AccumSteps  int     `yaml:"accum_steps"`
}

// SchedConfig is the learning-rate schedule, evaluated per optimiser step.
type SchedConfig struct {
	Name         string  `yaml:"name"` // cosine, step or constant
	WarmupEpochs float64 `yaml:"warmup_epochs"`
	WarmupLR     float64 `yaml:"warmup_lr"`
	MinLR        float64 `yaml:"min_lr"`
	DecayEpochs  float64 `yaml:"decay_epochs"`
	DecayRate    float64 `yaml:"decay_rate"`
}

// EMAConfig keeps an exponential moving average of the weights.
type EMAConfig struct {
	Enabled bool    `yaml:"enabled"`
	Decay   float64 `yaml:"decay"`
}

// CkptConfig says which checkpoints to keep.
type CkptConfig struct {
	// Every saves epoch-N checkpoints every Every epochs (0: never); last and
	// best are always kept.
	Every int `yaml:"every"`
}

// DefaultConfig is the main job: the CPU-sized ViT on the embedded
// Fashion-MNIST subset.
func DefaultConfig() Config {
	return Config{
		Model: ModelConfig{Name: "vit_fmnist_patch4_28", Precision: "fp32"},
		Data:  DataConfig{Dataset: "fashion-mnist-embedded", BatchSize: 64, EvalBatchSize: 250, Workers: 2},
		// Five epochs of 10,000 images favour many steps at a high rate and
		// no augmentation (see configs/fashion_mnist.yaml).
		Aug: AugConfig{Train: "none", HFlip: 0.5, MixupProb: 1, SwitchProb: 0.5, CropPct: 0.875},
		Optim: OptimConfig{Name: "adamw", LR: 3e-3, WeightDecay: 0.05, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8,
			Momentum: 0.9, AccumSteps: 1},
		Sched:    SchedConfig{Name: "cosine", WarmupEpochs: 0.3, WarmupLR: 1e-6, MinLR: 1e-5, DecayEpochs: 30, DecayRate: 0.1},
		Distill:  distill.DefaultConfig(),
		Epochs:   5,
		Seed:     0,
		EMA:      EMAConfig{Decay: 0.9998},
		LogEvery: 50,
		Progress: true,
	}
}

// FinetuneConfig is what `vit-train finetune` starts from before its
// --config and --set: DefaultConfig with the fine-tuning recipe of the ViT
// paper (appendix B.1.1, table 4): SGD with momentum 0.9, no weight decay,
// gradient clipping at global norm 1, a short warmup and a cosine decay to
// 0, and the largest learning rate of the paper's ImageNet sweep
// {0.003, 0.01, 0.03, 0.06}, 0.06 for a batch of 512, scaled to the batch
// (optim.scale_lr: 0.0075 at batch 64). One epoch, no augmentation. At the
// checkpoint's own resolution it keeps a converged model's top-1; at a
// higher one it adapts the resampled position embeddings.
func FinetuneConfig() Config {
	c := DefaultConfig()
	c.Optim.Name, c.Optim.LR, c.Optim.ScaleLR = "sgd", 0.06, true
	c.Optim.Momentum, c.Optim.WeightDecay, c.Optim.ClipGrad = 0.9, 0, 1
	c.Sched = SchedConfig{Name: "cosine", WarmupEpochs: 0.1, WarmupLR: c.Sched.WarmupLR, MinLR: 0,
		DecayEpochs: c.Sched.DecayEpochs, DecayRate: c.Sched.DecayRate}
	c.Epochs = 1
	return c
}

// Layer is the one way a configuration is read: it layers the YAML file
// at path (if not empty) and then the key=value settings (--set) over c
// (see internal/layered), c being DefaultConfig, FinetuneConfig or a
// checkpoint's configuration. Unknown keys and values of the wrong type
// are errors naming the key and, in the file, its line. Layer checks no
// ranges or names: a run validates the result (Validate) once it is
// complete; evaluation checks only the values (OpenEval).
func (c Config) Layer(path string, sets []string) (Config, error) {
	tree := layered.Of(c)
	if path != "" {
		raw, err := os.ReadFile(path)
		if err != nil {
			return Config{}, err
		}
		if err := tree.MergeYAML(raw); err != nil {
			return Config{}, fmt.Errorf("config %s: %w", path, err)
		}
	}
	if err := tree.Set(sets); err != nil {
		return Config{}, err
	}
	return fromTree(tree)
}

// fromTree decodes a layered configuration.
func fromTree(t layered.Tree) (Config, error) {
	var c Config
	if err := t.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return c.canonical(), nil
}

// parseConfigYAML decodes a complete configuration, refusing unknown keys.
func parseConfigYAML(raw []byte) (Config, error) {
	var c Config
	if err := layered.DecodeStrict(raw, &c); err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return c.canonical(), nil
}

// canonical gives a decoded configuration one form: an empty model.spec
// is nil, as a configuration written without one decodes.
func (c Config) canonical() Config {
	if len(c.Model.Spec) == 0 {
		c.Model.Spec = nil
	}
	return c
}

// ModelSpec resolves the network from model.name (a registered preset),
// or from model.spec when set, and the model overrides. A ResNet's zero
// in_chans, img_size and num_classes are left for the data to fill
// (model.Spec.Resolve).
func (c Config) ModelSpec() (model.Spec, error) {
	m, o := c.Model, c.Model.Overrides
	if len(m.Spec) == 0 {
		return model.Create(m.Name, o)
	}
	spec, err := decodeSpec(m.Spec)
	if err != nil {
		return model.Spec{}, err
	}
	if spec.Name() != m.Name {
		return model.Spec{}, fmt.Errorf("model.spec.%s.name = %q differs from model.name = %q", spec.Arch(), spec.Name(), m.Name)
	}
	cfg, err := spec.Config.Override(o)
	return model.SpecOf(cfg), err
}

// decodeSpec reads model.spec, {ARCH: {FIELD: VALUE, …}}, through the
// architecture's decoder; a field the architecture's configuration does
// not have is an error naming it.
func decodeSpec(fields map[string]map[string]any) (model.Spec, error) {
	if len(fields) != 1 {
		return model.Spec{}, fmt.Errorf("model.spec: want one architecture's configuration, got %d", len(fields))
	}
	var arch string
	for arch = range fields {
	}
	spec, err := decodeFields(arch, fields[arch])
	if err != nil {
		return model.Spec{}, fmt.Errorf("model.spec.%s: %w", arch, err)
	}
	return spec, nil
}

// decodeFields decodes an architecture's configuration from its fields,
// refusing a field the configuration does not have.
func decodeFields(arch string, fields map[string]any) (model.Spec, error) {
	data, err := json.Marshal(fields)
	if err != nil {
		return model.Spec{}, err
	}
	spec, err := model.DecodeSpec(arch, data)
	if err != nil {
		return model.Spec{}, err
	}
	_, encoded, err := model.EncodeConfig(spec)
	if err != nil {
		return model.Spec{}, err
	}
	var known map[string]any
	if err := json.Unmarshal(encoded, &known); err != nil {
		return model.Spec{}, err
	}
	for k := range fields {
		if _, ok := known[k]; !ok {
			return model.Spec{}, fmt.Errorf("unknown field %q (known: %s)", k, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		}
	}
	return spec, nil
}

// Validate checks values that no type can (ranges and names) and refuses
// settings that cannot take effect: a key set to a value other than its
// default that the rest of the configuration ignores (aug.hflip with
// aug.train = none, ema.decay with EMA off, distill.tau without soft
// distillation, …) is an error naming the key and why.
func (c Config) Validate() error {
	if err := c.validateValues(); err != nil {
		return err
	}
	return c.checkEffective()
}

// validateValues checks ranges and names.
func (c Config) validateValues() error {
	bad := func(key string, v any, want string) error {
		return fmt.Errorf("config: %s = %v: %s", key, v, want)
	}
	spec, err := c.ModelSpec()
	if err != nil {
		return fmt.Errorf("config: model: %w", err)
	}
	if !model.CanDistil(spec) && c.Distill.Type != "none" {
		return fmt.Errorf("config: distill.type = %s: model %s has no distillation head", c.Distill.Type, c.Model.Name)
	}
	if err := c.Distill.Validate(); err != nil {
		return err
	}
	if _, err := c.Model.Products(); err != nil {
		return err
	}
	if err := c.checkNames(); err != nil {
		return err
	}
	switch {
	case c.Epochs < 1:
		return bad("epochs", c.Epochs, "must be at least 1")
	case c.Data.BatchSize < 1:
		return bad("data.batch_size", c.Data.BatchSize, "must be at least 1")
	case c.Data.EvalBatchSize < 1:
		return bad("data.eval_batch_size", c.Data.EvalBatchSize, "must be at least 1")
	case c.Data.RepeatedAug < 0:
		return bad("data.repeated_aug", c.Data.RepeatedAug, "must not be negative (0 or 1: off)")
	case c.Data.Workers < 1:
		return bad("data.workers", c.Data.Workers, "must be at least 1")
	case !(c.Data.ValSplit >= 0 && c.Data.ValSplit < 1):
		return bad("data.val_split", c.Data.ValSplit, "must be a fraction in [0, 1) of the training set (0: validate on the test set)")
	case !(c.Optim.LR > 0):
		return bad("optim.lr", c.Optim.LR, "must be positive")
	case c.Optim.WeightDecay < 0:
		return bad("optim.weight_decay", c.Optim.WeightDecay, "must not be negative")
	case c.Optim.AccumSteps < 1:
		return bad("optim.accum_steps", c.Optim.AccumSteps, "must be at least 1")
	case c.Optim.ClipGrad < 0:
		return bad("optim.clip_grad", c.Optim.ClipGrad, "must not be negative (0 disables clipping)")
	case c.Optim.LayerDecay < 0 || c.Optim.LayerDecay > 1:
		return bad("optim.layer_decay", c.Optim.LayerDecay, "must be in [0, 1] (0 disables it)")
	case c.Sched.WarmupEpochs < 0:
		return bad("sched.warmup_epochs", c.Sched.WarmupEpochs, "must not be negative")
	case c.Aug.Smoothing < 0 || c.Aug.Smoothing >= 1:
		return bad("aug.smoothing", c.Aug.Smoothing, "must be in [0, 1)")
	case c.Aug.ReProb < 0 || c.Aug.ReProb > 1:
		return bad("aug.reprob", c.Aug.ReProb, "must be in [0, 1]")
	case c.Aug.Mixup < 0 || c.Aug.CutMix < 0:
		return bad("aug.mixup/aug.cutmix", fmt.Sprint(c.Aug.Mixup, c.Aug.CutMix), "must not be negative")
	case c.EMA.Enabled && !(c.EMA.Decay > 0 && c.EMA.Decay < 1):
		return bad("ema.decay", c.EMA.Decay, "must be in (0, 1)")
	}
	return nil
}

// ineffective is a setting that cannot take effect: key is set (to a value
// other than its default, value) although why says it is ignored.
type ineffective struct {
	key   string
	value any
	set   bool
	why   string
}

// checkEffective refuses the first setting that cannot take effect.
func (c Config) checkEffective() error {
	for _, r := range c.ineffectiveSettings() {
		if r.set {
			return fmt.Errorf("config: %s = %v has no effect: %s", r.key, r.value, r.why)
		}
	}
	return nil
}

// ineffectiveSettings lists the settings that other settings can make
// ineffective, each with whether it is set to no effect. The settings that
// only some names of optim.name, sched.name, data.dataset or aug.train
// read come from those names' tables (names.go).
func (c Config) ineffectiveSettings() []ineffective {
	d := DefaultConfig()
	now, defaults := layered.Of(c), layered.Of(d)
	a, o, s, dl := c.Aug, c.Optim, c.Sched, c.Distill
	noMix := "aug.mixup and aug.cutmix are 0, so no batch is mixed"
	layerDecay := o.LayerDecay > 0 && o.LayerDecay < 1
	return slices.Concat(trainPipelines.unread(a.Train, now, defaults), []ineffective{
		{"aug.mixup_prob", a.MixupProb, a.Mixup == 0 && a.CutMix == 0 && a.MixupProb != d.Aug.MixupProb, noMix},
		{"aug.mixup_switch_prob", a.SwitchProb, !(a.Mixup > 0 && a.CutMix > 0) && a.SwitchProb != d.Aug.SwitchProb,
			"switching between Mixup and CutMix needs both aug.mixup and aug.cutmix above 0"},
		{"ema.decay", c.EMA.Decay, !c.EMA.Enabled && c.EMA.Decay != d.EMA.Decay, "ema.enabled is false"},
		{"distill.alpha", dl.Alpha, dl.Type == "none" && dl.Alpha != d.Distill.Alpha, "distill.type = none"},
		{"distill.tau", dl.Tau, dl.Type != "soft" && dl.Tau != d.Distill.Tau, fmt.Sprintf("distill.type = %s: only soft distillation has a temperature", dl.Type)},
		{"distill.per_batch", dl.PerBatch, dl.Type != "soft" && dl.PerBatch, fmt.Sprintf("distill.type = %s: only the soft loss is divided per batch", dl.Type)},
	}, optimizers.unread(o.Name, now, defaults), []ineffective{
		{"optim.nesterov", o.Nesterov, o.Name == "sgd" && o.Nesterov && o.Momentum == 0, "optim.momentum = 0: Nesterov momentum needs momentum"},
		{"optim.layer_decay", o.LayerDecay, layerDecay && c.Init.FreezeBackbone,
			"init.freeze_backbone = true trains only the heads, whose learning-rate scale is 1 at any layer decay"},
	}, schedules.unread(s.Name, now, defaults), []ineffective{
		{"sched.warmup_lr", s.WarmupLR, s.WarmupEpochs == 0 && s.WarmupLR != d.Sched.WarmupLR, "sched.warmup_epochs = 0"},
		{"init.ema", c.Init.EMA, c.Init.From == "" && c.Init.EMA, "init.from is not set"},
		{"data.val_seed", c.Data.ValSeed, c.Data.ValSplit == 0 && c.Data.ValSeed != d.Data.ValSeed, "data.val_split = 0 holds nothing out"},
	}, datasets.unread(c.Data.Dataset, now, defaults))
}

// YAML renders the resolved configuration, as saved in the run folder.
func (c Config) YAML() ([]byte, error) { return yaml.Marshal(c) }
