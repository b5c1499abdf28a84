package train

import (
	"fmt"

	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// Checkpoint is a checkpoint file (checkpoint.File) with the run
// configuration its metadata holds parsed and checked as a Config.
type Checkpoint struct {
	checkpoint.File
	Config *Config // nil for checkpoints made outside a training run
}

// Save writes the checkpoint, with Config as its run configuration, to
// path atomically (see checkpoint.File.Save).
func (c *Checkpoint) Save(path string) error {
	f := c.File
	f.RunConfig = nil
	if c.Config != nil {
		y, err := c.Config.YAML()
		if err != nil {
			return err
		}
		f.RunConfig = y
	}
	return f.Save(path)
}

// LoadCheckpoint reads the checkpoint at path (checkpoint.Load) and
// parses its run configuration. Errors name path, and the metadata key or
// tensor and its value.
func LoadCheckpoint(path string) (*Checkpoint, error) {
	f, err := checkpoint.Load(path)
	if err != nil {
		return nil, err
	}
	c, err := withConfig(f)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return c, nil
}

// withConfig parses f's run configuration, if it has one.
func withConfig(f *checkpoint.File) (*Checkpoint, error) {
	c := &Checkpoint{File: *f}
	if len(f.RunConfig) == 0 {
		return c, nil
	}
	cfg, err := parseConfigYAML(f.RunConfig)
	if err != nil {
		return nil, fmt.Errorf("metadata %q: %w", checkpoint.MetaConfig, err)
	}
	c.Config = &cfg
	return c, nil
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
	src := &ck.File
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
