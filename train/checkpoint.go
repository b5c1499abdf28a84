package train

import (
	"fmt"

	"github.com/vit-train/vit-train/model"
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

// NetworkOptions say how a checkpoint's network is built.
type NetworkOptions struct {
	EMA bool // load the EMA weights instead of the trained ones
	// ImageSize > 0 builds the network for another input size, a ViT's
	// pos_embed resampled to the new patch grid.
	ImageSize int
	// Model gives model.precision, the arithmetic of the network's
	// products; nil takes the checkpoint's run configuration's (fp32 for
	// a checkpoint made outside a training run).
	Model *ModelConfig
}

// OpenNetwork loads the checkpoint at path and builds its network
// (Checkpoint.Network). Errors name path.
func OpenNetwork(path string, o NetworkOptions) (*Checkpoint, model.Network, error) {
	ck, err := LoadCheckpoint(path)
	if err != nil {
		return nil, nil, err
	}
	n, _, err := ck.Network(o)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return ck, n, nil
}

// Network builds a new network from the spec the checkpoint carries,
// whatever its name or architecture, through NewNetwork (so in the
// precision o gives), and loads the checkpoint's weights into it; note
// says what was resampled for o.ImageSize, if anything.
func (c *Checkpoint) Network(o NetworkOptions) (net model.Network, note string, err error) {
	m := ModelConfig{}
	if c.Config != nil {
		m = c.Config.Model
	}
	if o.Model != nil {
		m = *o.Model
	}
	spec := c.Spec
	if _, size := spec.Input(); o.ImageSize > 0 && o.ImageSize != size {
		spec = spec.WithInput(o.ImageSize, 0)
	}
	if net, err = NewNetwork(spec, 0, m); err != nil {
		return nil, "", err
	}
	src := &c.File
	if o.EMA {
		if src, err = c.EMAWeights(); err != nil {
			return nil, "", err
		}
	}
	if note, err = src.LoadWeights(net, false); err != nil {
		return nil, "", err
	}
	return net, note, nil
}
