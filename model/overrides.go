package model

import (
	"fmt"
	"reflect"
	"strings"
)

// Overrides change a registered model's input, class count, shape and
// regularisation; zero fields keep the model's value. The shape fields
// are the keyword arguments timm's create_model passes to a ViT
// (patch_size, embed_dim, depth, num_heads, mlp_ratio) and DeiT's
// distillation token; an architecture that has no such field rejects them.
//
// The struct is the one list of the overrides: each field's yaml tag is
// its key (model.KEY in a training configuration, --KEY with dashes for
// underscores on the command line), its kind tag its OverrideKind and its
// help tag what it sets (see Fields).
type Overrides struct {
	ImageSize    int     `yaml:"img_size" kind:"input" help:"input image size"`
	NumClasses   int     `yaml:"num_classes" kind:"input" help:"number of classes"`
	Channels     int     `yaml:"in_chans" kind:"input" help:"input channels"`
	DropRate     float64 `yaml:"drop_rate" kind:"regularisation" help:"dropout rate (timm's drop_rate)"`
	AttnDropRate float64 `yaml:"attn_drop_rate" kind:"regularisation" help:"dropout rate of the attention weights"`
	DropPathRate float64 `yaml:"drop_path_rate" kind:"regularisation" help:"stochastic depth: the deepest block's drop-path rate"`

	PatchSize int `yaml:"patch_size" kind:"shape" help:"patch size"`
	EmbedDim  int `yaml:"embed_dim" kind:"shape" help:"embedding width"`
	Depth     int `yaml:"depth" kind:"shape" help:"number of encoder blocks"`
	Heads     int `yaml:"num_heads" kind:"shape" help:"attention heads"`
	// MLPRatio sets the MLP's hidden width to int(EmbedDim·MLPRatio), as
	// timm's Block; when only EmbedDim is set, the model's own ratio is kept.
	MLPRatio float64 `yaml:"mlp_ratio" kind:"shape" help:"MLP width / embedding width"`
	// Distilled adds DeiT's distillation token and head (false keeps the
	// model's own).
	Distilled bool `yaml:"distilled" kind:"shape" help:"add DeiT's distillation token and head"`
}

// OverrideKind groups the fields of Overrides.
type OverrideKind string

const (
	// Input is the image size, class count and channels.
	Input OverrideKind = "input"
	// Regularisation is the dropout and drop-path rates.
	Regularisation OverrideKind = "regularisation"
	// Shape is a ViT's shape and DeiT's distillation token.
	Shape OverrideKind = "shape"
)

// OverrideField is one field of an Overrides.
type OverrideField struct {
	// Key names the field: model.KEY in a training configuration.
	Key  string
	Kind OverrideKind
	// Help says what the field sets, for a flag's help.
	Help string
	// Value points into the Overrides: an *int, *float64 or *bool.
	Value any
}

// Flag is the command-line flag of the field: its key with dashes for
// underscores (img-size).
func (f OverrideField) Flag() string { return strings.ReplaceAll(f.Key, "_", "-") }

// IsSet reports whether the field differs from zero, that is, changes the
// model.
func (f OverrideField) IsSet() bool { return !reflect.ValueOf(f.Value).Elem().IsZero() }

// Get is the field's value: an int, float64 or bool.
func (f OverrideField) Get() any { return reflect.ValueOf(f.Value).Elem().Interface() }

// String is KEY = VALUE.
func (f OverrideField) String() string { return fmt.Sprintf("%s = %v", f.Key, f.Get()) }

// Fields lists o's fields in declaration order, their values pointing into
// o.
func (o *Overrides) Fields() []OverrideField {
	v := reflect.ValueOf(o).Elem()
	t := v.Type()
	out := make([]OverrideField, t.NumField())
	for i := range out {
		f := t.Field(i)
		out[i] = OverrideField{Key: f.Tag.Get("yaml"), Kind: OverrideKind(f.Tag.Get("kind")), Help: f.Tag.Get("help"),
			Value: v.Field(i).Addr().Interface()}
	}
	return out
}

// Of returns the fields of kind k.
func (o *Overrides) Of(k OverrideKind) []OverrideField {
	var out []OverrideField
	for _, f := range o.Fields() {
		if f.Kind == k {
			out = append(out, f)
		}
	}
	return out
}

// Setting returns the fields of kind k that o sets.
func (o Overrides) Setting(k OverrideKind) []OverrideField {
	var out []OverrideField
	for _, f := range o.Of(k) {
		if f.IsSet() {
			out = append(out, f)
		}
	}
	return out
}

// ChangesShape reports whether o sets any of the shape fields.
func (o Overrides) ChangesShape() bool { return len(o.Setting(Shape)) > 0 }

// ChangesRegularisation reports whether o sets a dropout or drop-path rate.
func (o Overrides) ChangesRegularisation() bool { return len(o.Setting(Regularisation)) > 0 }

// CheckNotNegative refuses a field of kind k below zero, naming it and its
// value.
func (o Overrides) CheckNotNegative(k OverrideKind) error {
	for _, f := range o.Of(k) {
		v := reflect.ValueOf(f.Value).Elem()
		if v.CanInt() && v.Int() < 0 || v.CanFloat() && v.Float() < 0 {
			return fmt.Errorf("%s must not be negative", f)
		}
	}
	return nil
}

// OverrideKeys lists the keys of kind k as a sentence: "a, b and c".
func OverrideKeys(k OverrideKind) string {
	var keys []string
	for _, f := range new(Overrides).Of(k) {
		keys = append(keys, f.Key)
	}
	if len(keys) < 2 {
		return strings.Join(keys, "")
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1]
}
