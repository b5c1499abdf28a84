package train

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/optim"
)

// State is where a run stands, saved in every checkpoint.
type State struct {
	Epoch     int     `json:"epoch"`      // epochs completed
	Batch     int     `json:"batch"`      // batches of epoch Epoch already trained (0 at an epoch boundary)
	Step      int     `json:"step"`       // optimiser steps taken
	BestTop1  float64 `json:"best_top1"`  // best validation top-1 so far (percent)
	BestEpoch int     `json:"best_epoch"` // epoch of BestTop1
	// Replicas is the number of processes of the data-parallel job that
	// wrote the checkpoint; 0 for a single process. Batch counts that job's
	// per-process batches.
	Replicas int `json:"replicas,omitempty"`
}

// Checkpoint is the content of a vit-train checkpoint: a safetensors file
// whose tensors are the model's parameters under timm's names (plus
// "optim.*" optimiser moments and "ema.*" EMA weights when saved for
// resuming) and whose metadata holds the model's spec, the training
// configuration, the run state, the normalisation and the class names.
//
// The spec is stored as the architecture's name ("vit_train.arch"; files
// without it hold a ViT) and its configuration as JSON under the key the
// architecture registered ("vit_train.model" for a ViT,
// "vit_train.resnet" for a ResNet). A ResNet checkpoint stores the batch
// norms' running_mean and running_var beside the parameters, under
// torchvision's names.
type Checkpoint struct {
	Spec    model.Spec // the network, as model.New rebuilds it
	Config  *Config    // nil for checkpoints made outside a training run
	State   State
	Mean    []float32
	Std     []float32
	Classes []string
	Params  []safetensors.Tensor // model weights, timm names
	Optim   []optim.Tensor       // optimiser state ("optim." names)
	EMA     []optim.Tensor       // EMA weights ("ema." names)
}

// Metadata keys of a checkpoint; the spec's configuration goes under the
// key its architecture registered.
const (
	metaConfig  = "vit_train.config"
	metaState   = "vit_train.state"
	metaMean    = "vit_train.mean"
	metaStd     = "vit_train.std"
	metaClasses = "vit_train.classes"
	metaArch    = "vit_train.arch"
	// defaultArch is the architecture of files written before
	// "vit_train.arch" existed.
	defaultArch = "vit"
)

// Save writes the checkpoint to path atomically, with CRC-32C checksums of
// every tensor and of the header that LoadCheckpoint verifies (see
// safetensors.WriteFileAtomic): a temporary file in the same folder, synced,
// then renamed over path. If the write fails (a full disk, a quota, a
// read-only folder) the error names path, the previous checkpoint at path
// is left whole and loadable, and the temporary file is removed.
func (c *Checkpoint) Save(path string) error {
	meta := map[string]string{"format": "pt"}
	put := func(key string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		meta[key] = string(b)
		return nil
	}
	key, spec, err := model.EncodeConfig(c.Spec)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	meta[metaArch], meta[key] = c.Spec.Arch(), string(spec)
	for _, kv := range []struct {
		k string
		v any
	}{{metaState, c.State}, {metaMean, c.Mean}, {metaStd, c.Std}, {metaClasses, c.Classes}} {
		if err := put(kv.k, kv.v); err != nil {
			return err
		}
	}
	if c.Config != nil {
		y, err := c.Config.YAML()
		if err != nil {
			return err
		}
		meta[metaConfig] = string(y)
	}
	tensors := append([]safetensors.Tensor(nil), c.Params...)
	for _, group := range [][]optim.Tensor{c.Optim, c.EMA} {
		for _, t := range group {
			tensors = append(tensors, safetensors.Tensor{Name: t.Name, Shape: t.Shape, Data: t.Data})
		}
	}
	return safetensors.WriteFileAtomic(path, tensors, meta)
}

// LoadCheckpoint reads a checkpoint, verifying its checksums (files
// written before checksums existed load unverified) and checking its
// metadata against its tensors: the parameters must be exactly those of
// the recorded architecture, so that building the model allocates no more
// than the file holds. Errors name path, and the metadata key or tensor
// and its value.
func LoadCheckpoint(path string) (*Checkpoint, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := decodeCheckpoint(f)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return c, nil
}

// decodeCheckpoint builds a checkpoint from a file's metadata and tensors,
// checking both as LoadCheckpoint describes; errors do not name the file.
func decodeCheckpoint(f *safetensors.File) (*Checkpoint, error) {
	c := &Checkpoint{}
	get := func(key string, v any, required bool) error {
		s, ok := f.Metadata[key]
		if !ok {
			if required {
				return fmt.Errorf("metadata has no %q (not a vit-train checkpoint? use `vit-train import` for timm files)", key)
			}
			return nil
		}
		if err := json.Unmarshal([]byte(s), v); err != nil {
			return fmt.Errorf("metadata %q is %s: %w", key, clip(s), err)
		}
		return nil
	}
	for _, t := range f.Tensors {
		switch {
		case strings.HasPrefix(t.Name, optim.OptimizerPrefix):
			c.Optim = append(c.Optim, optim.Tensor{Name: t.Name, Shape: t.Shape, Data: t.Data})
		case strings.HasPrefix(t.Name, optim.EMAPrefix):
			c.EMA = append(c.EMA, optim.Tensor{Name: t.Name, Shape: t.Shape, Data: t.Data})
		default:
			c.Params = append(c.Params, t)
		}
	}
	arch := f.Metadata[metaArch]
	if arch == "" {
		arch = defaultArch
	}
	a, err := model.Lookup(arch)
	if err != nil {
		return nil, fmt.Errorf("metadata %q is %q: %w", metaArch, arch, err)
	}
	js, ok := f.Metadata[a.ConfigKey]
	if !ok {
		return nil, fmt.Errorf("metadata has no %q (not a vit-train checkpoint? use `vit-train import` for timm files)", a.ConfigKey)
	}
	if c.Spec, err = model.DecodeSpec(arch, []byte(js)); err != nil {
		return nil, fmt.Errorf("metadata %q is %s: %w", a.ConfigKey, clip(js), err)
	}
	if err := model.CheckTensors(c.Spec, c.Params, fmt.Sprintf("metadata %q", a.ConfigKey)); err != nil {
		return nil, err
	}
	channels, _ := c.Spec.Input()
	classes := c.Spec.NumClasses()
	for _, kv := range []struct {
		k string
		v any
	}{{metaState, &c.State}, {metaMean, &c.Mean}, {metaStd, &c.Std}, {metaClasses, &c.Classes}} {
		if err := get(kv.k, kv.v, false); err != nil {
			return nil, err
		}
	}
	if err := c.State.check(); err != nil {
		return nil, fmt.Errorf("metadata %q: %w", metaState, err)
	}
	if err := checkNormalisation(c.Mean, c.Std, channels); err != nil {
		return nil, err
	}
	if len(c.Classes) != 0 && len(c.Classes) != classes {
		return nil, fmt.Errorf("metadata %q names %d classes, but the model has %d", metaClasses, len(c.Classes), classes)
	}
	if y, ok := f.Metadata[metaConfig]; ok {
		cfg, err := parseConfigYAML([]byte(y))
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", metaConfig, err)
		}
		c.Config = &cfg
	}
	return c, nil
}

// clip shortens a metadata value for an error message.
func clip(s string) string {
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return strconv.Quote(s)
}

// check rejects run positions a training run cannot reach.
func (s State) check() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"epoch", s.Epoch}, {"batch", s.Batch}, {"step", s.Step}, {"best_epoch", s.BestEpoch}, {"replicas", s.Replicas}} {
		if f.v < 0 {
			return fmt.Errorf("%s is %d, want at least 0", f.name, f.v)
		}
	}
	if s.BestEpoch > s.Epoch {
		return fmt.Errorf("best_epoch %d is after epoch %d", s.BestEpoch, s.Epoch)
	}
	if !(s.BestTop1 >= 0 && s.BestTop1 <= 100) {
		return fmt.Errorf("best_top1 is %g, want a percentage", s.BestTop1)
	}
	return nil
}

// checkNormalisation checks a checkpoint's mean and std: none, one value
// for all channels, or one per channel; finite, std positive.
func checkNormalisation(mean, std []float32, channels int) error {
	if len(mean) != len(std) {
		return fmt.Errorf("metadata %q has %d values but %q has %d", metaMean, len(mean), metaStd, len(std))
	}
	if n := len(mean); n != 0 && n != 1 && n != channels {
		return fmt.Errorf("metadata %q has %d values, want 1 or one per channel (%d)", metaMean, n, channels)
	}
	for i := range mean {
		if m := float64(mean[i]); math.IsNaN(m) || math.IsInf(m, 0) {
			return fmt.Errorf("metadata %q value %d is %g", metaMean, i, m)
		}
		if v := float64(std[i]); !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("metadata %q value %d is %g, want a positive number", metaStd, i, v)
		}
	}
	return nil
}

// LoadWeights copies the checkpoint's tensors into n (model.Load): every
// tensor of n must be present with its shape, and no other may be, except
// that a ViT's pos_embed is resampled when only the patch grid differs (the
// returned note says so) and, when skipHead is set, the classification
// heads are left as they are (for a new class count).
func (c *Checkpoint) LoadWeights(n model.Network, skipHead bool) (note string, err error) {
	return model.Load(n, c.Params, c.Spec, skipHead)
}

// OpenViT loads the checkpoint at path into a new ViT of its
// configuration, for what only a ViT has (attention maps, position
// embeddings); with ema, the EMA weights are loaded instead of the
// trained ones.
func OpenViT(path string, ema bool) (*Checkpoint, *vit.ViT, error) {
	ck, n, err := OpenNetwork(path, ema)
	if err != nil {
		return nil, nil, err
	}
	m, err := vit.Of(n)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return ck, m, nil
}

// EMAWeights returns a copy of the checkpoint whose parameters are its EMA
// weights, under the model's names. Tensors the EMA does not average (a
// ResNet's batch-norm running statistics, which the EMA network shares
// with the trained one) keep the checkpoint's values.
func (c *Checkpoint) EMAWeights() (*Checkpoint, error) {
	if len(c.EMA) == 0 {
		return nil, fmt.Errorf("the checkpoint has no EMA weights")
	}
	out := *c
	out.Params = nil
	averaged := make(map[string]bool, len(c.EMA))
	for _, t := range c.EMA {
		name := strings.TrimPrefix(t.Name, optim.EMAPrefix)
		averaged[name] = true
		out.Params = append(out.Params, safetensors.Tensor{Name: name, Shape: t.Shape, Data: t.Data})
	}
	for _, t := range c.Params {
		if !averaged[t.Name] {
			out.Params = append(out.Params, t)
		}
	}
	return &out, nil
}

// OpenNetwork loads the checkpoint at path into a new network built from
// the spec it carries, whatever the network's name or architecture; with
// ema, the EMA weights are loaded instead of the trained ones.
func OpenNetwork(path string, ema bool) (*Checkpoint, model.Network, error) {
	ck, err := LoadCheckpoint(path)
	if err != nil {
		return nil, nil, err
	}
	n, err := model.New(ck.Spec, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	src := ck
	if ema {
		if src, err = ck.EMAWeights(); err != nil {
			return nil, nil, fmt.Errorf("checkpoint %s: %w", path, err)
		}
	}
	if _, err := src.LoadWeights(n, false); err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return ck, n, nil
}
