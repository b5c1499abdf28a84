package layered

import (
	"strings"
	"testing"
)

type inner struct {
	Rate  float64 `yaml:"rate"`
	Steps int     `yaml:"steps"`
	Name  string  `yaml:"name"`
}

type outer struct {
	Seed  uint64 `yaml:"seed"`
	On    bool   `yaml:"on"`
	Inner inner  `yaml:"inner"`
}

func defaults() outer { return outer{Seed: 1, Inner: inner{Rate: 0.5, Steps: 3, Name: "a"}} }

func TestLayersApplyInOrder(t *testing.T) {
	tree := Of(defaults())
	// A mapping merges field by field: inner.steps keeps its default.
	if err := tree.MergeYAML([]byte("inner: {rate: 2, name: b}\non: true\n")); err != nil {
		t.Fatal(err)
	}
	if err := tree.Set([]string{"inner.name=c", "seed=7"}); err != nil {
		t.Fatal(err)
	}
	var got outer
	if err := tree.Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := outer{Seed: 7, On: true, Inner: inner{Rate: 2, Steps: 3, Name: "c"}}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if d := defaults(); d.Inner.Name != "a" {
		t.Fatal("layering changed the defaults")
	}
}

func TestBadKeysAndValuesNameTheKey(t *testing.T) {
	for _, c := range []struct {
		yaml string
		sets []string
		want string
	}{
		{"inner: {speed: 1}", nil, `unknown key "inner.speed" (known: inner.name, inner.rate, inner.steps)`},
		{"inner: 3", nil, `key "inner": want a mapping`},
		{"", []string{"inner.steps=1.5"}, `--set inner.steps: key "inner.steps": want an integer`},
		{"", []string{"seed=-1"}, `want a non-negative integer`},
		{"", []string{"on=yes please"}, `key "on": want true or false`},
		{"", []string{"inner.rate=fast"}, `key "inner.rate": want a number`},
		{"", []string{"inner.name=[x]"}, `key "inner.name": want a string`},
		{"", []string{"seed.x=1"}, `key "seed" is not a mapping`},
		{"", []string{"novalue"}, `--set "novalue": want key=value`},
		{"", []string{"=1"}, `want key=value`},
		{"", []string{"seed=[1"}, `--set seed: value "[1"`},
		{"seed: [1", nil, "yaml"},
	} {
		tree := Of(defaults())
		err := tree.MergeYAML([]byte(c.yaml))
		if err == nil {
			err = tree.Set(c.sets)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %v: want an error containing %q, got %v", c.yaml, c.sets, c.want, err)
		}
	}
}

func TestDecodeStrictRefusesUnknownFields(t *testing.T) {
	var o outer
	if err := DecodeStrict([]byte("seed: 3\ncolour: red\n"), &o); err == nil || !strings.Contains(err.Error(), "colour") {
		t.Fatalf("want an error naming the unknown field, got %v", err)
	}
	if err := DecodeStrict([]byte("seed: 3\n"), &o); err != nil || o.Seed != 3 {
		t.Fatalf("seed %d, %v", o.Seed, err)
	}
}

// withOptional has a leaf that holds a struct, nil by default, as
// train.ModelConfig's vit.
type withOptional struct {
	Seed  uint64 `yaml:"seed"`
	Inner inner  `yaml:"inner"`
	Shape *inner `yaml:"shape,omitempty"`
}

func TestYAMLErrorsNameTheLineOfTheFile(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want string
	}{
		{"seed: 1\ninner:\n  rate: 2\n  speed: 3\n", `line 4: unknown key "inner.speed"`},
		{"seed: 1\n\ninner:\n  steps: many\n", `line 4: key "inner.steps": want an integer, got many`},
		{"seed: 1\ninner: 3\n", `line 2: key "inner": want a mapping, got "3"`},
		{"inner:\n  rate: 1\nshape:\n  name: x\n  stepz: 2\n", `line 5: unknown key "shape.stepz" (known: shape.name, shape.rate, shape.steps)`},
		{"shape:\n  rate: 1\n  steps: [1, 2]\n", `line 3: key "shape.steps": yaml: unmarshal errors:` + "\n  line 3: cannot unmarshal !!seq into int"},
		{"- 1\n- 2\n", `line 1: want a mapping of keys to values, got a list`},
	} {
		err := Of(withOptional{}).MergeYAML([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: want an error containing %q, got %v", c.yaml, c.want, err)
		}
	}
}

func TestStructLeafTakesAWholeMapping(t *testing.T) {
	tree := Of(withOptional{})
	if err := tree.MergeYAML([]byte("shape:\n  rate: 1.5\n  name: s\n")); err != nil {
		t.Fatal(err)
	}
	if err := tree.Set([]string{"shape=null", "shape={rate: 2, steps: 4}"}); err != nil {
		t.Fatal(err)
	}
	var got withOptional
	if err := tree.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Shape == nil || *got.Shape != (inner{Rate: 2, Steps: 4}) {
		t.Fatalf("shape %+v, want the mapping set last, whole", got.Shape)
	}
	for _, c := range []struct{ set, want string }{
		{"shape={rate: 2, colour: red}", `--set shape: unknown key "shape.colour"`},
		{"shape={steps: x}", `--set shape: key "shape.steps"`},
	} {
		if err := Of(withOptional{}).Set([]string{c.set}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error containing %q, got %v", c.set, c.want, err)
		}
	}
	err := Of(withOptional{}).Set([]string{"shape.rate=2"})
	if err == nil || !strings.Contains(err.Error(), `key "shape" is not set: give it whole, as shape={...}`) {
		t.Errorf("shape.rate=2 on a nil struct: got %v", err)
	}
}

func TestDiffNamesTheChangedKeys(t *testing.T) {
	a, b := Of(defaults()), Of(defaults())
	if err := b.Set([]string{"inner.steps=4", "on=true", "inner.rate=0.5"}); err != nil {
		t.Fatal(err)
	}
	got := Diff(a, b)
	want := []Change{{"inner.steps", "3", "4"}, {"on", "false", "true"}}
	if len(got) != len(want) {
		t.Fatalf("Diff = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Diff[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if d := Diff(a, Of(defaults())); len(d) != 0 {
		t.Errorf("Diff of equal trees = %v", d)
	}
}

// TestInlineFieldsAreTheParents checks that the fields of an inline struct
// field are set, and refused, as the fields of the struct holding it.
func TestInlineFieldsAreTheParents(t *testing.T) {
	type withInline struct {
		Seed  uint64 `yaml:"seed"`
		inner `yaml:",inline"`
	}
	tree := Of(withInline{Seed: 1, inner: inner{Rate: 0.5, Steps: 3}})
	if err := tree.MergeYAML([]byte("rate: 2\n")); err != nil {
		t.Fatal(err)
	}
	if err := tree.Set([]string{"steps=4"}); err != nil {
		t.Fatal(err)
	}
	var got withInline
	if err := tree.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Seed != 1 || got.Rate != 2 || got.Steps != 4 {
		t.Errorf("got %+v", got)
	}
	if err := tree.Set([]string{"inner.rate=1"}); err == nil || !strings.Contains(err.Error(), `unknown key "inner"`) {
		t.Errorf("inner.rate: %v, want an unknown key", err)
	}
}
