// Package layered builds a configuration struct in layers: its defaults,
// then YAML documents, then key=value settings (as a command line's
// --set). Every key and value is checked against the struct's own fields
// before it is applied, so an unknown key or a value of the wrong kind is
// an error naming the key, and a mapping merges into the existing one
// field by field instead of replacing it.
package layered

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Tree is a configuration as nested maps keyed by its YAML field names;
// the leaves keep their Go types (int, float64, uint64, bool, string), so
// that new values can be checked against them.
type Tree map[string]any

// Of returns the tree of v, a struct whose fields, and the fields of its
// struct fields, carry yaml tags.
func Of(v any) Tree { return structTree(reflect.ValueOf(v)) }

func structTree(v reflect.Value) map[string]any {
	m := map[string]any{}
	for i := 0; i < v.NumField(); i++ {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			m[name] = structTree(f)
		} else {
			m[name] = f.Interface()
		}
	}
	return m
}

// MergeYAML merges the YAML mapping raw into t: each key it sets must be
// one of t's and each value of its kind (an integer is accepted for a
// float). Keys it does not set keep their values.
func (t Tree) MergeYAML(raw []byte) error {
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return err
	}
	return merge(t, doc, "")
}

// Set applies key=value settings in order: key is a dotted path
// (optim.lr), value is parsed as YAML. Errors begin "--set KEY:".
func (t Tree) Set(sets []string) error {
	for _, s := range sets {
		key, val, ok := strings.Cut(s, "=")
		if !ok || key == "" {
			return fmt.Errorf("--set %q: want key=value", s)
		}
		var v any
		if err := yaml.Unmarshal([]byte(val), &v); err != nil {
			return fmt.Errorf("--set %s: value %q: %w", key, val, err)
		}
		if err := setPath(t, strings.Split(key, "."), v, ""); err != nil {
			return fmt.Errorf("--set %s: %w", key, err)
		}
	}
	return nil
}

// Decode stores t in dst, a pointer to the struct t was made of, through
// its YAML form (see DecodeStrict).
func (t Tree) Decode(dst any) error {
	raw, err := yaml.Marshal(map[string]any(t))
	if err != nil {
		return err
	}
	return DecodeStrict(raw, dst)
}

// DecodeStrict decodes the YAML document raw into dst, refusing keys that
// dst has no field for.
func DecodeStrict(raw []byte, dst any) error {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	return dec.Decode(dst)
}

// merge copies src into dst, refusing keys dst does not have and values
// whose kind differs from the default's.
func merge(dst, src map[string]any, prefix string) error {
	keys := make([]string, 0, len(src))
	for k := range src {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := setPath(dst, []string{k}, src[k], prefix); err != nil {
			return err
		}
	}
	return nil
}

func setPath(dst map[string]any, path []string, v any, prefix string) error {
	key := prefix + path[0]
	old, ok := dst[path[0]]
	if !ok {
		return fmt.Errorf("unknown key %q (known: %s)", key, strings.Join(knownKeys(dst, prefix), ", "))
	}
	if sub, isMap := old.(map[string]any); isMap {
		if len(path) > 1 {
			return setPath(sub, path[1:], v, key+".")
		}
		vm, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("key %q: want a mapping, got %v", key, v)
		}
		return merge(sub, vm, key+".")
	}
	if len(path) > 1 {
		return fmt.Errorf("key %q is not a mapping", key)
	}
	nv, err := convertLike(old, v)
	if err != nil {
		return fmt.Errorf("key %q: %w", key, err)
	}
	dst[path[0]] = nv
	return nil
}

func knownKeys(m map[string]any, prefix string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, prefix+k)
	}
	sort.Strings(ks)
	return ks
}

// convertLike returns v as the kind of old: ints are accepted for floats,
// anything else must match.
func convertLike(old, v any) (any, error) {
	switch old.(type) {
	case int:
		if i, ok := v.(int); ok {
			return i, nil
		}
		return nil, fmt.Errorf("want an integer, got %v (%T)", v, v)
	case float64:
		switch x := v.(type) {
		case float64:
			return x, nil
		case int:
			return float64(x), nil
		}
		return nil, fmt.Errorf("want a number, got %v (%T)", v, v)
	case uint64:
		if i, ok := v.(int); ok && i >= 0 {
			return uint64(i), nil
		}
		return nil, fmt.Errorf("want a non-negative integer, got %v (%T)", v, v)
	case bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, fmt.Errorf("want true or false, got %v (%T)", v, v)
	case string:
		switch x := v.(type) {
		case string:
			return x, nil
		case nil:
			return "", nil
		}
		return nil, fmt.Errorf("want a string, got %v (%T)", v, v)
	}
	return v, nil
}
