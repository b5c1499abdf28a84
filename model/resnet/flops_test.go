package resnet

import (
	"math"
	"testing"
)

// TestMACsMatchPublishedCounts compares MACs with the counts published
// for these networks: torchvision's model cards (fvcore's "GFLOPS", which
// are multiply-adds) at 224 px and 1000 classes, and He et al.'s CIFAR
// ResNets (ResNet-20: 41 M, ResNet-110: 253 M, at 32 px and 10 classes).
func TestMACsMatchPublishedCounts(t *testing.T) {
	for _, tc := range []struct {
		arch             string
		size, classes    int
		published, tolPc float64
	}{
		{"resnet18", 224, 1000, 1.81e9, 0.5},
		{"resnet34", 224, 1000, 3.66e9, 0.5},
		{"resnet50", 224, 1000, 4.09e9, 0.5},
		{"resnet101", 224, 1000, 7.80e9, 0.5},
		{"resnet152", 224, 1000, 11.51e9, 0.5},
		{"resnet20", 32, 10, 41e6, 1.5},
		{"resnet110", 32, 10, 253e6, 1.5},
	} {
		got, err := MACs(BuildConfig{Arch: tc.arch, ImageSize: tc.size, NumClasses: tc.classes})
		if err != nil {
			t.Fatal(err)
		}
		if d := 100 * math.Abs(float64(got)-tc.published) / tc.published; d > tc.tolPc {
			t.Errorf("%s at %d px: %d multiply-adds, published %.4g (%.2f%% off, tolerance %.1f%%)", tc.arch, tc.size, got, tc.published, d, tc.tolPc)
		}
	}
	if n, err := MACs(BuildConfig{Arch: "resnet20", NumClasses: 10}); n != 0 || err != nil {
		t.Errorf("an unset image size gives %d, %v; want 0", n, err)
	}
}
