package augment

import (
	"encoding/json"
	"testing"
)

func TestInterpTextRoundTrip(t *testing.T) {
	for _, i := range []Interp{Bilinear, Bicubic, RandomInterp} {
		b, err := json.Marshal(i)
		if err != nil {
			t.Fatal(err)
		}
		var back Interp
		if err := json.Unmarshal(b, &back); err != nil || back != i {
			t.Errorf("%s: %s reads back as %v, %v", i, b, back, err)
		}
	}
	if _, err := json.Marshal(Interp(7)); err == nil {
		t.Error("Interp(7) marshalled")
	}
	var i Interp
	if err := json.Unmarshal([]byte(`"nearest"`), &i); err == nil {
		t.Error(`"nearest" read as an interpolation`)
	}
}

// FuzzParseInterp checks that ParseInterp accepts exactly the names String
// writes.
func FuzzParseInterp(f *testing.F) {
	for _, s := range []string{"bilinear", "bicubic", "random", "", "Bicubic", "nearest", "bicubic\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		i, err := ParseInterp(s)
		if err != nil {
			return
		}
		if i.String() != s {
			t.Fatalf("ParseInterp(%q) = %v, which String writes as %q", s, i, i.String())
		}
	})
}
