package model

import (
	"strings"
	"testing"
)

// TestOverrideFieldsAreDescribed checks that every field of Overrides has
// a key, a kind and help, and that the keys are distinct: the table the
// configuration, the flags and their help read.
func TestOverrideFieldsAreDescribed(t *testing.T) {
	seen := map[string]bool{}
	var o Overrides
	for _, f := range o.Fields() {
		switch {
		case f.Key == "" || f.Help == "":
			t.Errorf("field %+v has no key or help", f)
		case f.Kind != Input && f.Kind != Shape && f.Kind != Regularisation:
			t.Errorf("%s: kind %q", f.Key, f.Kind)
		case seen[f.Key]:
			t.Errorf("%s: key listed twice", f.Key)
		}
		seen[f.Key] = true
	}
	if got := OverrideKeys(Shape); got != "patch_size, embed_dim, depth, num_heads, mlp_ratio and distilled" {
		t.Errorf("OverrideKeys(Shape) = %q", got)
	}
}

// TestOverridesSetting sets one field of each kind through its pointer and
// reads it back by kind.
func TestOverridesSetting(t *testing.T) {
	var o Overrides
	for _, f := range o.Fields() {
		switch p := f.Value.(type) {
		case *int:
			if f.Key == "depth" {
				*p = -2
			}
		case *float64:
			if f.Key == "drop_path_rate" {
				*p = 0.1
			}
		case *bool:
			*p = true
		}
	}
	if o.Depth != -2 || o.DropPathRate != 0.1 || !o.Distilled {
		t.Fatalf("the pointers did not set the fields: %+v", o)
	}
	if !o.ChangesShape() || !o.ChangesRegularisation() || len(o.Setting(Input)) != 0 {
		t.Errorf("changes: shape %t, regularisation %t, input %v", o.ChangesShape(), o.ChangesRegularisation(), o.Setting(Input))
	}
	if err := o.CheckNotNegative(Shape); err == nil || !strings.Contains(err.Error(), "depth = -2 must not be negative") {
		t.Errorf("CheckNotNegative: %v", err)
	}
	if err := o.CheckNotNegative(Regularisation); err != nil {
		t.Errorf("CheckNotNegative(Regularisation): %v", err)
	}
}
