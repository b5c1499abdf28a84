package resnet

import "testing"

func TestShapesMatchNew(t *testing.T) {
	for _, cfg := range []BuildConfig{
		{Arch: "resnet18", NumClasses: 1000},
		{Arch: "resnet50", NumClasses: 1000},
		{Arch: "resnet20", Channels: 1, NumClasses: 10},
	} {
		m := readOnlyModel(t, cfg)
		params, buffers, err := Shapes(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			what      string
			got, want []Param
		}{{"params", params, m.Params()}, {"buffers", buffers, m.Buffers()}} {
			if len(c.got) != len(c.want) {
				t.Fatalf("%s: %d %s, New makes %d", cfg.Arch, len(c.got), c.what, len(c.want))
			}
			for i, w := range c.want {
				if g := c.got[i]; g.Name != w.Name || !g.Shape.Eq(w.Shape) || g.Value != nil {
					t.Fatalf("%s %s %d: %s %v, New makes %s %v", cfg.Arch, c.what, i, g.Name, g.Shape, w.Name, w.Shape)
				}
			}
		}
	}
	if _, _, err := Shapes(BuildConfig{Arch: "resnet7", NumClasses: 1}); err == nil {
		t.Error("an unknown architecture was accepted")
	}
}
