// Package checkpoint is vit-train's checkpoint format: a safetensors file
// whose tensors are a network's parameters (and, for resuming, the
// optimiser's moments and the EMA weights) and whose metadata holds the
// network's spec, the run's position, its configuration, the input
// normalisation, the evaluation preprocessing and the class names.
package checkpoint

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model"
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

// File is the content of a vit-train checkpoint: a safetensors file
// whose tensors are the model's parameters under timm's names (plus
// "optim.*" optimiser moments and "ema.*" EMA weights when saved for
// resuming) and whose metadata holds the model's spec, the training
// configuration, the run state, the normalisation, the evaluation
// preprocessing and the class names.
//
// The spec is stored as the architecture's name ("vit_train.arch"; files
// without it hold a ViT) and its configuration as JSON under the key the
// architecture registered ("vit_train.model" for a ViT,
// "vit_train.resnet" for a ResNet). A ResNet checkpoint stores the batch
// norms' running_mean and running_var beside the parameters, under
// torchvision's names.
type File struct {
	Spec model.Spec // the network, as model.New rebuilds it
	// RunConfig is the training run's configuration as YAML (train.Config);
	// empty for checkpoints made outside a training run. This package
	// stores it as it is; train parses and checks it.
	RunConfig []byte
	State     State
	Mean      []float32
	Std       []float32
	// Eval is how the model's images are resized and cropped for
	// evaluation; nil in files written before it was recorded.
	Eval    *Preprocessing
	Classes []string
	Params  []safetensors.Tensor // model weights, timm names
	Optim   []optim.Tensor       // optimiser state ("optim." names)
	EMA     []optim.Tensor       // EMA weights ("ema." names)
}

// Preprocessing is the part of a model's evaluation preprocessing that its
// input size and normalisation do not give (timm's pretrained
// configuration's crop_pct and interpolation): the shorter side is resized
// to floor(size / CropPct) with Interpolation, then the centre cropped to
// size × size (augment.EvalPipeline).
type Preprocessing struct {
	CropPct       float64        `json:"crop_pct"`      // in (0, 1]
	Interpolation augment.Interp `json:"interpolation"` // bilinear or bicubic
}

// UnmarshalJSON reads both fields; a record without either is an error,
// not a default.
func (p *Preprocessing) UnmarshalJSON(b []byte) error {
	var v struct {
		CropPct       *float64        `json:"crop_pct"`
		Interpolation *augment.Interp `json:"interpolation"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v.CropPct == nil || v.Interpolation == nil {
		return fmt.Errorf("want both crop_pct and interpolation")
	}
	p.CropPct, p.Interpolation = *v.CropPct, *v.Interpolation
	return nil
}

// Check rejects a crop fraction outside (0, 1] and an interpolation that
// evaluation cannot use (random).
func (p Preprocessing) Check() error {
	if !(p.CropPct > 0 && p.CropPct <= 1) {
		return fmt.Errorf("crop_pct is %g, want a fraction in (0, 1]", p.CropPct)
	}
	if p.Interpolation != augment.Bilinear && p.Interpolation != augment.Bicubic {
		return fmt.Errorf("interpolation is %s, want bilinear or bicubic", p.Interpolation)
	}
	return nil
}

// Metadata keys of a checkpoint; the spec's configuration goes under the
// key its architecture registered.
const (
	MetaConfig  = "vit_train.config"
	MetaState   = "vit_train.state"
	MetaMean    = "vit_train.mean"
	MetaStd     = "vit_train.std"
	MetaEval    = "vit_train.eval"
	MetaClasses = "vit_train.classes"
	MetaArch    = "vit_train.arch"
	// defaultArch is the architecture of files written before
	// "vit_train.arch" existed.
	defaultArch = "vit"
)

// Save writes the checkpoint to path atomically, with CRC-32C checksums of
// every tensor and of the header that Load verifies (see
// safetensors.WriteFileAtomic): a temporary file in the same folder, synced,
// then renamed over path. If the write fails (a full disk, a quota, a
// read-only folder) the error names path, the previous checkpoint at path
// is left whole and loadable, and the temporary file is removed.
func (c *File) Save(path string) error {
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
	meta[MetaArch], meta[key] = c.Spec.Arch(), string(spec)
	for _, kv := range []struct {
		k string
		v any
	}{{MetaState, c.State}, {MetaMean, c.Mean}, {MetaStd, c.Std}, {MetaClasses, c.Classes}} {
		if err := put(kv.k, kv.v); err != nil {
			return err
		}
	}
	if c.Eval != nil {
		if err := put(MetaEval, c.Eval); err != nil {
			return fmt.Errorf("checkpoint %s: metadata %q: %w", path, MetaEval, err)
		}
	}
	if len(c.RunConfig) > 0 {
		meta[MetaConfig] = string(c.RunConfig)
	}
	tensors := append([]safetensors.Tensor(nil), c.Params...)
	for _, group := range [][]optim.Tensor{c.Optim, c.EMA} {
		for _, t := range group {
			tensors = append(tensors, safetensors.Tensor{Name: t.Name, Shape: t.Shape, Data: t.Data})
		}
	}
	return safetensors.WriteFileAtomic(path, tensors, meta)
}

// Load reads a checkpoint, verifying its checksums (files
// written before checksums existed load unverified) and checking its
// metadata against its tensors: the parameters must be exactly those of
// the recorded architecture, so that building the model allocates no more
// than the file holds. Errors name path, and the metadata key or tensor
// and its value.
func Load(path string) (*File, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return c, nil
}

// Decode builds a checkpoint from a safetensors file's metadata and
// tensors, checking both as Load describes; errors do not name the file.
func Decode(f *safetensors.File) (*File, error) {
	c := &File{}
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
	arch := f.Metadata[MetaArch]
	if arch == "" {
		arch = defaultArch
	}
	a, err := model.Lookup(arch)
	if err != nil {
		return nil, fmt.Errorf("metadata %q is %q: %w", MetaArch, arch, err)
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
	}{{MetaState, &c.State}, {MetaMean, &c.Mean}, {MetaStd, &c.Std}, {MetaClasses, &c.Classes}} {
		if err := get(kv.k, kv.v, false); err != nil {
			return nil, err
		}
	}
	if err := c.State.check(); err != nil {
		return nil, fmt.Errorf("metadata %q: %w", MetaState, err)
	}
	if err := checkNormalisation(c.Mean, c.Std, channels); err != nil {
		return nil, err
	}
	if _, ok := f.Metadata[MetaEval]; ok {
		c.Eval = &Preprocessing{}
		if err := get(MetaEval, c.Eval, true); err != nil {
			return nil, err
		}
		if err := c.Eval.Check(); err != nil {
			return nil, fmt.Errorf("metadata %q: %w", MetaEval, err)
		}
	}
	if len(c.Classes) != 0 && len(c.Classes) != classes {
		return nil, fmt.Errorf("metadata %q names %d classes, but the model has %d", MetaClasses, len(c.Classes), classes)
	}
	if y, ok := f.Metadata[MetaConfig]; ok {
		c.RunConfig = []byte(y)
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
		return fmt.Errorf("metadata %q has %d values but %q has %d", MetaMean, len(mean), MetaStd, len(std))
	}
	if n := len(mean); n != 0 && n != 1 && n != channels {
		return fmt.Errorf("metadata %q has %d values, want 1 or one per channel (%d)", MetaMean, n, channels)
	}
	for i := range mean {
		if m := float64(mean[i]); math.IsNaN(m) || math.IsInf(m, 0) {
			return fmt.Errorf("metadata %q value %d is %g", MetaMean, i, m)
		}
		if v := float64(std[i]); !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("metadata %q value %d is %g, want a positive number", MetaStd, i, v)
		}
	}
	return nil
}

// LoadWeights copies the checkpoint's tensors into n (model.Load): every
// tensor of n must be present with its shape, and no other may be, except
// that a ViT's pos_embed is resampled when only the patch grid differs (the
// returned note says so) and, when skipHead is set, the classification
// heads are left as they are (for a new class count).
func (c *File) LoadWeights(n model.Network, skipHead bool) (note string, err error) {
	return model.Load(n, c.Params, c.Spec, skipHead)
}

// EMAWeights returns a copy of the checkpoint whose parameters are its EMA
// weights, under the model's names. Tensors the EMA does not average (a
// ResNet's batch-norm running statistics, which the EMA network shares
// with the trained one) keep the checkpoint's values.
func (c *File) EMAWeights() (*File, error) {
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
