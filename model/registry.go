package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Architecture is what an architecture registers: its name, its presets,
// and how a checkpoint's JSON becomes its Config. Everything else (build,
// checks, parameter names, no-decay set, layer map, heads, PyTorch naming)
// is a method of that Config.
type Architecture struct {
	// Name is what Config.Architecture returns and a checkpoint's
	// "vit_train.arch" holds ("vit", "resnet").
	Name string
	// ConfigKey is the checkpoint metadata key that holds the Config as
	// JSON ("vit_train.model").
	ConfigKey string
	// Presets lists the model names Preset creates, in the order
	// `vit-train models` lists them.
	Presets func() []string
	// Preset returns the configuration of a preset with o applied; ok is
	// false when name is not one of the architecture's.
	Preset func(name string, o Overrides) (c Config, ok bool, err error)
	// Decode reads a Config from the JSON under ConfigKey.
	Decode func(data []byte) (Config, error)
}

var registry struct {
	sync.RWMutex
	archs []Architecture
}

// Register makes an architecture known to Create, New and checkpoints. It
// panics when the name is empty or already registered: registration
// happens once, from the architecture's package initialisation.
func Register(a Architecture) {
	registry.Lock()
	defer registry.Unlock()
	if a.Name == "" || a.ConfigKey == "" || a.Presets == nil || a.Preset == nil || a.Decode == nil {
		panic(fmt.Sprintf("model: architecture %q registered without a name, config key, presets or decoder", a.Name))
	}
	if slices.ContainsFunc(registry.archs, func(b Architecture) bool { return b.Name == a.Name }) {
		panic(fmt.Sprintf("model: architecture %q registered twice", a.Name))
	}
	registry.archs = append(registry.archs, a)
	slices.SortFunc(registry.archs, func(x, y Architecture) int { return strings.Compare(x.Name, y.Name) })
}

// Architectures lists the registered architectures by name.
func Architectures() []Architecture {
	registry.RLock()
	defer registry.RUnlock()
	return slices.Clone(registry.archs)
}

// Lookup returns the registered architecture called name.
func Lookup(name string) (Architecture, error) {
	archs := Architectures()
	for _, a := range archs {
		if a.Name == name {
			return a, nil
		}
	}
	known := make([]string, len(archs))
	for i, a := range archs {
		known[i] = a.Name
	}
	return Architecture{}, fmt.Errorf("architecture %q is not registered (registered: %s)", name, strings.Join(known, ", "))
}

// DecodeSpec reads the spec of architecture arch from its JSON
// configuration.
func DecodeSpec(arch string, data []byte) (Spec, error) {
	a, err := Lookup(arch)
	if err != nil {
		return Spec{}, err
	}
	c, err := a.Decode(data)
	if err != nil {
		return Spec{}, err
	}
	if c.Architecture() != arch {
		return Spec{}, fmt.Errorf("architecture %q decoded a %q configuration", arch, c.Architecture())
	}
	return Spec{c}, nil
}

// EncodeConfig is the JSON a checkpoint stores the spec's configuration
// as, and the metadata key it goes under.
func EncodeConfig(s Spec) (key string, data []byte, err error) {
	a, err := Lookup(s.Arch())
	if err != nil {
		return "", nil, err
	}
	data, err = json.Marshal(s.Config)
	return a.ConfigKey, data, err
}

// Names lists the registered model names, architecture by architecture.
func Names() []string {
	var out []string
	for _, a := range Architectures() {
		out = append(out, a.Presets()...)
	}
	return out
}

// Create returns the spec of the registered model name with overrides
// applied. Input fields an architecture has no default for (a ResNet's)
// stay zero until Resolve fills them from the data.
func Create(name string, o Overrides) (Spec, error) {
	for _, a := range Architectures() {
		c, ok, err := a.Preset(name, o)
		if ok {
			return Spec{c}, err
		}
	}
	return Spec{}, fmt.Errorf("unknown model %q (known: %s)", name, strings.Join(Names(), ", "))
}

var errNoConfig = errors.New("model: the spec has no configuration")

// New builds the network of spec, initialised reproducibly from seed.
func New(spec Spec, seed uint64) (Network, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	return spec.Config.Build(seed)
}
