package model

import (
	"fmt"
	"slices"
	"strings"

	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/model/resnet"
	"github.com/vit-train/vit-train/model/vit"
)

// Architectures a Spec (and a checkpoint's "vit_train.arch") names.
const (
	ArchViT    = "vit"
	ArchResNet = "resnet"
)

// Spec is everything needed to rebuild a network: its architecture and
// that architecture's configuration. Specs are comparable with ==.
type Spec struct {
	Arch   string     // ArchViT or ArchResNet
	ViT    vit.Config // the configuration when Arch is ArchViT
	ResNet ResNetSpec // the configuration when Arch is ArchResNet
}

// ResNetSpec is a ResNet's configuration as a checkpoint records it
// (metadata "vit_train.resnet").
type ResNetSpec struct {
	Arch       string `json:"arch"`
	Channels   int    `json:"in_chans"`
	ImageSize  int    `json:"img_size"`
	NumClasses int    `json:"num_classes"`
}

func (s ResNetSpec) config() resnet.Config {
	return resnet.Config{Arch: s.Arch, Channels: s.Channels, ImageSize: s.ImageSize, NumClasses: s.NumClasses, Dtype: tensor.Float32}
}

// ViTSpec is the spec of a ViT of configuration c.
func ViTSpec(c vit.Config) Spec { return Spec{Arch: ArchViT, ViT: c} }

// ResNet is the spec of a ResNet of configuration s.
func ResNet(s ResNetSpec) Spec { return Spec{Arch: ArchResNet, ResNet: s} }

// Name is the network's name: the ViT's configured name or the ResNet's
// architecture.
func (s Spec) Name() string {
	if s.Arch == ArchResNet {
		return s.ResNet.Arch
	}
	return s.ViT.Name
}

// Input is the (channels, image size) the network takes.
func (s Spec) Input() (channels, size int) {
	if s.Arch == ArchResNet {
		return s.ResNet.Channels, s.ResNet.ImageSize
	}
	return s.ViT.Channels, s.ViT.ImageSize
}

// NumClasses is the width of the network's logits.
func (s Spec) NumClasses() int {
	if s.Arch == ArchResNet {
		return s.ResNet.NumClasses
	}
	return s.ViT.NumClasses
}

// IsCNN reports whether the network is a convolutional network (a ResNet),
// which has no tokens, dropout or drop-path.
func (s Spec) IsCNN() bool { return s.Arch == ArchResNet }

// WithInput returns the spec with another input size and class count; 0
// keeps the current value. A ViT keeps its patch size (its pos_embed is
// resampled when weights are loaded); a ResNet takes any size.
func (s Spec) WithInput(size, classes int) Spec {
	if s.Arch == ArchResNet {
		s.ResNet.ImageSize = keep(size, s.ResNet.ImageSize)
		s.ResNet.NumClasses = keep(classes, s.ResNet.NumClasses)
		return s
	}
	s.ViT.ImageSize = keep(size, s.ViT.ImageSize)
	s.ViT.NumClasses = keep(classes, s.ViT.NumClasses)
	return s
}

func keep(v, old int) int {
	if v == 0 {
		return old
	}
	return v
}

// Validate reports a spec that New cannot build, naming the field and value.
func (s Spec) Validate() error {
	switch s.Arch {
	case ArchViT:
		return s.ViT.Validate()
	case ArchResNet:
		r := s.ResNet
		if r.ImageSize < 1 {
			return fmt.Errorf("model %s: img_size %d must be positive (set model.img_size)", r.Arch, r.ImageSize)
		}
		_, err := resnet.NumParams(r.config())
		return err
	}
	return fmt.Errorf("model architecture %q: want %q or %q", s.Arch, ArchViT, ArchResNet)
}

// Overrides change a registered model's input, class count, shape and
// regularisation; zero fields keep the model's value (a ResNet has no
// default input: Resolve fills it from the data). The shape fields are
// the keyword arguments timm's create_model passes to a ViT (patch_size,
// embed_dim, depth, num_heads, mlp_ratio) and apply to ViTs only.
type Overrides struct {
	ImageSize    int
	NumClasses   int
	Channels     int
	DropRate     float64
	AttnDropRate float64
	DropPathRate float64

	PatchSize int
	EmbedDim  int
	Depth     int
	Heads     int
	// MLPRatio sets the MLP's hidden width to int(EmbedDim·MLPRatio), as
	// timm's Block; when only EmbedDim is set, the model's own ratio is kept.
	MLPRatio float64
}

// changesShape reports whether o sets any of a ViT's shape fields.
func (o Overrides) changesShape() bool {
	return o.PatchSize != 0 || o.EmbedDim != 0 || o.Depth != 0 || o.Heads != 0 || o.MLPRatio != 0
}

// reshape applies o's shape fields to c.
func (o Overrides) reshape(c vit.Config) vit.Config {
	ratio := float64(c.MLPDim) / float64(c.EmbedDim)
	if o.MLPRatio != 0 {
		ratio = o.MLPRatio
	}
	c.PatchSize = keep(o.PatchSize, c.PatchSize)
	c.EmbedDim = keep(o.EmbedDim, c.EmbedDim)
	c.Depth = keep(o.Depth, c.Depth)
	c.Heads = keep(o.Heads, c.Heads)
	if o.EmbedDim != 0 || o.MLPRatio != 0 {
		c.MLPDim = int(float64(c.EmbedDim) * ratio)
	}
	return c
}

// Names lists the registered model names: the ViT and DeiT presets, then
// the ResNet architectures.
func Names() []string { return append(vit.Presets(), resnet.Archs()...) }

// isResNet reports whether name is one of the ResNet architectures.
func isResNet(name string) bool {
	return slices.ContainsFunc(resnet.Archs(), func(a string) bool { return strings.EqualFold(a, name) })
}

// Create returns the spec of the registered model name with overrides
// applied. A ResNet's zero input fields stay zero until Resolve fills them
// from the data; a ViT preset's are the preset's.
func Create(name string, o Overrides) (Spec, error) {
	if isResNet(name) {
		switch {
		case o.DropRate != 0 || o.AttnDropRate != 0 || o.DropPathRate != 0:
			return Spec{}, fmt.Errorf("model %s: drop_rate, attn_drop_rate and drop_path_rate apply to ViTs only", name)
		case o.changesShape():
			return Spec{}, fmt.Errorf("model %s: patch_size, embed_dim, depth, num_heads and mlp_ratio apply to ViTs only", name)
		case o.ImageSize < 0 || o.NumClasses < 0 || o.Channels < 0:
			return Spec{}, fmt.Errorf("model %s: img_size, num_classes and in_chans must not be negative", name)
		}
		return ResNet(ResNetSpec{Arch: strings.ToLower(name), Channels: o.Channels, ImageSize: o.ImageSize, NumClasses: o.NumClasses}), nil
	}
	c, err := vit.Preset(name, vit.Overrides{})
	if err != nil {
		return Spec{}, fmt.Errorf("%w (or a ResNet: %s)", err, strings.Join(resnet.Archs(), ", "))
	}
	return CustomViT(c, o)
}

// CustomViT returns the spec of the ViT of configuration c, whatever its
// name (an imported model, say), with overrides applied: input size, class
// count, channels and shape when set, and the dropout and drop-path rates
// always, as for a preset.
func CustomViT(c vit.Config, o Overrides) (Spec, error) {
	if o.PatchSize < 0 || o.EmbedDim < 0 || o.Depth < 0 || o.Heads < 0 || o.MLPRatio < 0 {
		return Spec{}, fmt.Errorf("model %s: patch_size %d, embed_dim %d, depth %d, num_heads %d and mlp_ratio %g must not be negative",
			c.Name, o.PatchSize, o.EmbedDim, o.Depth, o.Heads, o.MLPRatio)
	}
	c = o.reshape(c)
	c.ImageSize = keep(o.ImageSize, c.ImageSize)
	c.NumClasses = keep(o.NumClasses, c.NumClasses)
	c.Channels = keep(o.Channels, c.Channels)
	c.DropRate, c.AttnDropRate, c.DropPathRate = o.DropRate, o.AttnDropRate, o.DropPathRate
	return ViTSpec(c), c.Validate()
}

// Resolve fills a ResNet spec's unset (zero) channels, image size and
// class count from the data; a ViT spec is returned as it is.
func (s Spec) Resolve(channels, size, classes int) Spec {
	if s.Arch != ArchResNet {
		return s
	}
	s.ResNet.Channels = keep(s.ResNet.Channels, channels)
	s.ResNet.ImageSize = keep(s.ResNet.ImageSize, size)
	s.ResNet.NumClasses = keep(s.ResNet.NumClasses, classes)
	return s
}

// New builds the network of spec, initialised reproducibly from seed.
func New(spec Spec, seed uint64) (Network, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if spec.Arch == ArchResNet {
		m, err := resnet.New(spec.ResNet.config(), seed)
		if err != nil {
			return nil, err
		}
		return &resnetNetwork{spec: spec.ResNet, m: m}, nil
	}
	m, err := vit.New(spec.ViT, seed)
	if err != nil {
		return nil, err
	}
	return vitNetwork{m}, nil
}
