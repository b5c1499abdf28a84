package augment

import "testing"

// benchTransform applies t to copies of a (3, h, w) image, one per iteration.
func benchTransform(b *testing.B, t Transform, h, w int) {
	src := randomImage(newRNG(1), 3, h, w)
	rng := newRNG(2)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Recycle(t.Apply(src.Clone(), rng))
	}
}

// BenchmarkRandomResizedCrop224 crops a 500x375 image to 224x224, bicubic.
func BenchmarkRandomResizedCrop224(b *testing.B) {
	benchTransform(b, NewRandomResizedCrop(224, Bicubic), 375, 500)
}

// BenchmarkRandAugment224 runs rand-m9-mstd0.5-inc1 on 224x224 images.
func BenchmarkRandAugment224(b *testing.B) {
	ra, _ := ParseRandAugment("rand-m9-mstd0.5-inc1", AugHParams{Interp: Bicubic})
	benchTransform(b, ra, 224, 224)
}

// BenchmarkRandAugment32 runs rand-m9-mstd0.5-inc1 on 32x32 images.
func BenchmarkRandAugment32(b *testing.B) {
	ra, _ := ParseRandAugment("rand-m9-mstd0.5-inc1", AugHParams{Interp: Bicubic})
	benchTransform(b, ra, 32, 32)
}

// BenchmarkNormalize224 normalises a 224x224 RGB image into a batch slot.
func BenchmarkNormalize224(b *testing.B) {
	src := randomImage(newRNG(1), 3, 224, 224)
	dst := make([]float32, len(src.Pix))
	mean, std := []float32{0.485, 0.456, 0.406}, []float32{0.229, 0.224, 0.225}
	for i := 0; i < b.N; i++ {
		normalize(src, mean, std, dst)
	}
}

// BenchmarkAffineLevels224 runs each of RandAugment's geometric operations
// at magnitude 9 on a 224x224 RGB image of levels, bicubic.
func BenchmarkAffineLevels224(b *testing.B) {
	src := toLevels(randomImage(newRNG(1), 3, 224, 224))
	fill := []uint8{124, 116, 104}
	for _, c := range []struct {
		name string
		m    [6]float64
	}{
		{"rotate", rotateMatrix(224, 224, 27)},
		{"shear-x", [6]float64{1, 0.27, 0, 0, 1, 0}},
		{"shear-y", [6]float64{1, 0, 0, 0.27, 1, 0}},
		{"translate-x", [6]float64{1, 0, 0.405 * 224, 0, 1, 0}},
		{"translate-y", [6]float64{1, 0, 0, 0, 1, -0.405 * 224}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				recycleBytes(affineLevels(src, c.m, Bicubic, fill))
			}
		})
	}
}
