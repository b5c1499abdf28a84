package resnet

import "testing"

// TestLayoutMatchesParams checks that the layout names every convolution
// and batch norm of the parameters, with their kernel sizes, and has the
// strides and shortcuts of the architecture.
func TestLayoutMatchesParams(t *testing.T) {
	for _, c := range []struct {
		arch                      string
		blocks, shortcut, strided int
		maxPool                   bool
	}{{"resnet20", 9, 2, 2, false}, {"resnet18", 8, 3, 3, true}, {"resnet50", 16, 4, 3, true}} {
		m, err := New(BuildConfig{Arch: c.arch, NumClasses: 10}, 1)
		if err != nil {
			t.Fatal(err)
		}
		shapes := map[string][]int{}
		for _, p := range m.Params() {
			shapes[p.Name] = p.Shape
		}
		l := m.Layout()
		units := []ConvBN{l.Stem}
		shortcuts, strided := 0, 0
		for _, b := range l.Blocks {
			units = append(units, b.Units...)
			for _, u := range b.Units {
				if u.Stride == 2 {
					strided++
				}
			}
			if b.Shortcut != nil {
				units = append(units, *b.Shortcut)
				shortcuts++
			}
		}
		for _, u := range units {
			w := shapes[u.Conv+".weight"]
			if len(w) != 4 || w[2] != u.Kernel || w[3] != u.Kernel || u.Pad != u.Kernel/2 {
				t.Errorf("%s: %s kernel %d pad %d, weight %v", c.arch, u.Conv, u.Kernel, u.Pad, w)
			}
			if _, ok := shapes[u.BN+".weight"]; !ok || m.bns[u.BN] == nil {
				t.Errorf("%s: no batch norm %s", c.arch, u.BN)
			}
		}
		if len(l.Blocks) != c.blocks || shortcuts != c.shortcut || l.MaxPool != c.maxPool || strided != c.strided {
			t.Errorf("%s: %d blocks, %d shortcuts, %d strided units, max pool %t", c.arch, len(l.Blocks), shortcuts, strided, l.MaxPool)
		}
		if fc := shapes["fc.weight"]; fc[1] != l.Features {
			t.Errorf("%s: features %d, fc.weight %v", c.arch, l.Features, fc)
		}
	}
}
