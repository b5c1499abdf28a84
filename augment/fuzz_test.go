package augment

import (
	"math"
	"strings"
	"testing"
)

func FuzzParseRandAugment(f *testing.F) {
	for _, s := range []string{"rand-m9-mstd0.5-inc1", "rand", "rand-n3-m7-mmax12-w0-mstd101", "rand-m", "rand--", "rand-inc2", "rand-mstd1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		ra, err := ParseRandAugment(spec, AugHParams{})
		if err != nil {
			if !strings.Contains(err.Error(), "RandAugment spec") {
				t.Fatalf("error without context: %v", err)
			}
			return
		}
		if len(ra.Ops) != 15 || ra.NumLayers < 0 || ra.NumLayers > maxLayers || ra.Magnitude < 0 || math.IsNaN(ra.MagnitudeStd) || ra.MagnitudeStd < 0 {
			t.Fatalf("%q parsed to %+v", spec, ra)
		}
		img := ra.Apply(randomImage(newRNG(1), 3, 8, 8), newRNG(2))
		if err := img.Valid(); err != nil || img.H != 8 || img.W != 8 {
			t.Fatalf("%q: output %v", spec, err)
		}
	})
}

// FuzzTrainPipeline runs the DeiT and eval pipelines on images of any small
// size, including 1-pixel ones.
func FuzzTrainPipeline(f *testing.F) {
	f.Add(uint8(1), uint8(1), uint8(3), uint8(32), uint64(0))
	f.Add(uint8(37), uint8(5), uint8(1), uint8(40), uint64(7))
	f.Add(uint8(2), uint8(90), uint8(3), uint8(8), uint64(9))
	f.Fuzz(func(t *testing.T, h, w, c, size uint8, seed uint64) {
		if h == 0 || w == 0 || size == 0 || (c != 1 && c != 3) {
			return
		}
		mean, std := make([]float32, c), make([]float32, c)
		for i := range mean {
			mean[i], std[i] = 0.5, 0.25
		}
		n := int(size) * int(size) * int(c)
		train, err := TrainPipeline(DeiTTrainConfig(int(size), mean, std))
		if err != nil {
			t.Fatal(err)
		}
		eval, err := EvalPipeline(EvalConfig{Size: int(size), Interp: Bicubic, Mean: mean, Std: std})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []Pipeline{train, eval} {
			dst := make([]float32, n)
			img := randomImage(newRNG(seed), int(c), int(h), int(w))
			if err := p.Process(img, newRNG(seed+1), dst); err != nil {
				t.Fatalf("%dx%dx%d -> %d: %v", c, h, w, size, err)
			}
			for _, v := range dst {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("non-finite output %v", v)
				}
			}
		}
	})
}
