//go:build amd64 && !purego

package augment

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// TestAffineBicubicKernels runs TestAffineBicubicRowMatchesPixels's cases
// on each bicubic affine kernel the processor can run, not only on the
// one init chose.
func TestAffineBicubicKernels(t *testing.T) {
	kernels := []struct {
		name  string
		ok    bool
		row   func(dst *uint8, dstPlane int, src *float32, srcPlane, wp int, k *[8]float64, n, channels int, fill *float64)
		group int
	}{
		{"avx2", cpu.X86.HasAVX2, affineBicubicAVX2, 4},
		{"avx512", cpu.X86.HasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL, affineBicubicAVX512, 8},
	}
	row, group := affineBicubicRow, affineBicubicGroup
	defer func() { affineBicubicRow, affineBicubicGroup = row, group }()
	for _, k := range kernels {
		t.Run(k.name, func(t *testing.T) {
			if !k.ok {
				t.Skipf("the processor lacks %s", k.name)
			}
			affineBicubicRow, affineBicubicGroup = k.row, k.group
			checkAffineKernel(t)
		})
	}
}
