package data

import "testing"

// The tables are returned as new slices, so a caller that changes one (or
// a checkpoint that keeps one) cannot change what the next caller gets.
func TestTablesAreNewSlicesEachCall(t *testing.T) {
	for name, f := range map[string]func() ([]float32, []float32){
		"ImageNet": ImageNetMeanStd, "CIFAR-10": CIFAR10MeanStd, "CIFAR-100": CIFAR100MeanStd,
		"Fashion-MNIST": FashionMNISTMeanStd, "MNIST": MNISTMeanStd,
	} {
		m, s := f()
		m0, s0 := m[0], s[0]
		m[0], s[0] = -1, -1
		if m2, s2 := f(); m2[0] != m0 || s2[0] != s0 {
			t.Errorf("%s: changing one call's slices changed the next call's: %v %v", name, m2, s2)
		}
		if len(m) != len(s) || (len(m) != 1 && len(m) != 3) {
			t.Errorf("%s: %d means, %d standard deviations", name, len(m), len(s))
		}
	}
	c := FashionMNISTClasses()
	c[0] = "changed"
	if FashionMNISTClasses()[0] != "T-shirt/top" || len(MNISTClasses()) != 10 {
		t.Error("class names are shared between calls")
	}
	e := DefaultExtensions()
	e[0] = ".gif"
	if DefaultExtensions()[0] != ".jpg" {
		t.Error("default extensions are shared between calls")
	}
}
