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
	"maps"
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
// struct fields, carry yaml tags; an inline struct field's fields are v's.
func Of(v any) Tree { return structTree(reflect.ValueOf(v)) }

func structTree(v reflect.Value) map[string]any {
	m := map[string]any{}
	for i := 0; i < v.NumField(); i++ {
		name, opts, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		f := v.Field(i)
		if f.Kind() == reflect.Struct && opts == "inline" {
			maps.Copy(m, structTree(f))
		} else if f.Kind() == reflect.Struct {
			m[name] = structTree(f)
		} else {
			m[name] = f.Interface()
		}
	}
	return m
}

// MergeYAML merges the YAML mapping raw into t: each key it sets must be
// one of t's and each value of its kind (an integer is accepted for a
// float). Keys it does not set keep their values. Errors begin "line N:",
// the line of raw that holds the key or value at fault.
func (t Tree) MergeYAML(raw []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return err
	}
	if len(doc.Content) == 0 {
		return nil // an empty document sets nothing
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a mapping of keys to values, got %s", root.Line, nodeText(root))
	}
	return mergeNode(t, root, "")
}

// mergeNode merges the mapping node n into dst, refusing keys dst does not
// have and values whose kind differs from the default's.
func mergeNode(dst map[string]any, n *yaml.Node, prefix string) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := prefix + k.Value
		old, ok := dst[k.Value]
		if !ok {
			return fmt.Errorf("line %d: unknown key %q (known: %s)", k.Line, key, strings.Join(knownKeys(dst, prefix), ", "))
		}
		if sub, isMap := old.(map[string]any); isMap {
			if v.Kind != yaml.MappingNode {
				return fmt.Errorf("line %d: key %q: want a mapping, got %s", v.Line, key, nodeText(v))
			}
			if err := mergeNode(sub, v, key+"."); err != nil {
				return err
			}
			continue
		}
		nv, err := leafValue(old, v, key)
		if err != nil {
			return err
		}
		dst[k.Value] = nv
	}
	return nil
}

// leafValue decodes n as the new value of the leaf key whose current value
// is old. A leaf that holds a pointer to a struct (nil by default) takes a
// whole mapping, checked field by field against that struct, and keeps
// it as a new pointer. Errors begin with the line of the fault when n
// has one.
func leafValue(old any, n *yaml.Node, key string) (any, error) {
	if st, ok := structType(old); ok {
		if isNull(n) {
			return reflect.Zero(reflect.TypeOf(old)).Interface(), nil
		}
		if err := checkStruct(n, st, key); err != nil {
			return nil, err
		}
		p := reflect.New(st)
		if err := n.Decode(p.Interface()); err != nil {
			return nil, atLine(n, fmt.Errorf("key %q: %w", key, err))
		}
		return p.Interface(), nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, atLine(n, fmt.Errorf("key %q: %w", key, err))
	}
	nv, err := convertLike(old, v)
	if err != nil {
		return nil, atLine(n, fmt.Errorf("key %q: %w", key, err))
	}
	return nv, nil
}

// isNull reports whether n is YAML's null.
func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// atLine prefixes err with n's line, when n comes from a document.
func atLine(n *yaml.Node, err error) error {
	if n.Line == 0 {
		return err
	}
	return fmt.Errorf("line %d: %w", n.Line, err)
}

// structType is the struct type a leaf holds (through a pointer), if any.
func structType(v any) (reflect.Type, bool) {
	t := reflect.TypeOf(v)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t, t != nil && t.Kind() == reflect.Struct
}

// checkStruct checks that the mapping node n decodes into a struct of type
// st: every key is one of its yaml fields, and every value decodes into
// its field. Errors name the key and, through n, the line.
func checkStruct(n *yaml.Node, st reflect.Type, key string) error {
	if n.Kind != yaml.MappingNode {
		return atLine(n, fmt.Errorf("key %q: want a mapping, got %s", key, nodeText(n)))
	}
	fields := map[string]reflect.Type{}
	for i := 0; i < st.NumField(); i++ {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			fields[name] = st.Field(i).Type
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ft, ok := fields[k.Value]
		if !ok {
			known := make([]string, 0, len(fields))
			for name := range fields {
				known = append(known, key+"."+name)
			}
			sort.Strings(known)
			return atLine(k, fmt.Errorf("unknown key %q (known: %s)", key+"."+k.Value, strings.Join(known, ", ")))
		}
		if err := v.Decode(reflect.New(ft).Interface()); err != nil {
			return atLine(v, fmt.Errorf("key %q: %w", key+"."+k.Value, err))
		}
	}
	return nil
}

// nodeText is a short description of n for error messages.
func nodeText(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%q", n.Value)
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
		if st, ok := structType(old); ok {
			return fmt.Errorf("key %q is not set: give it whole, as %s={...} with the fields of %s", key, key, st)
		}
		return fmt.Errorf("key %q is not a mapping", key)
	}
	if _, ok := structType(old); ok {
		var n yaml.Node
		if err := n.Encode(v); err != nil {
			return fmt.Errorf("key %q: %w", key, err)
		}
		nv, err := leafValue(old, &n, key)
		if err != nil {
			return err
		}
		dst[path[0]] = nv
		return nil
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

// Change is a key whose value differs between two trees.
type Change struct {
	Key      string // dotted, as --set takes it
	From, To string // the values, as YAML
}

// Diff lists the keys whose values differ from a to b, in key order;
// a and b are trees of the same struct type (see Of). Values are compared
// as YAML, so an integer and the float of the same value are equal.
func Diff(a, b Tree) []Change {
	var out []Change
	diffInto(&out, a, b, "")
	return out
}

func diffInto(out *[]Change, a, b map[string]any, prefix string) {
	for _, k := range knownKeys(a, "") {
		av, bv := a[k], b[k]
		am, aIsTree := av.(map[string]any)
		bm, bIsTree := bv.(map[string]any)
		if aIsTree && bIsTree {
			diffInto(out, am, bm, prefix+k+".")
			continue
		}
		if from, to := yamlText(av), yamlText(bv); from != to {
			*out = append(*out, Change{Key: prefix + k, From: from, To: to})
		}
	}
}

// yamlText is v as a one-line YAML value.
func yamlText(v any) string {
	raw, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.Join(strings.Fields(string(raw)), " ")
}
