package vit

import (
	"testing"

	"github.com/vit-train/vit-train/model"
)

// BenchmarkTrainStep times forward + backward of the CIFAR benchmark
// configuration (vit_cifar_patch4_32, batch 64); images/s is reported.
func BenchmarkTrainStep(b *testing.B) {
	cfg, _ := Preset("vit_cifar_patch4_32", model.Overrides{})
	m, err := New(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	t := &testing.T{}
	s := lossStep(t, m, 64, true, 1)
	if err := s.Run(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(64*b.N)/b.Elapsed().Seconds(), "images/s")
	// Training is about 3× the forward FLOPs: the backward pass has two
	// products per forward product.
	b.ReportMetric(float64(3*cfg.ForwardFLOPs())*64*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkForward times the evaluation graph of the same configuration.
func BenchmarkForward(b *testing.B) {
	cfg, _ := Preset("vit_cifar_patch4_32", model.Overrides{})
	m, err := New(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	g, err := m.BuildGraph(64, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := g.Run(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := g.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(64*b.N)/b.Elapsed().Seconds(), "images/s")
}
