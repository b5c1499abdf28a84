//go:build unix

package ops

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/nn/blas"
)

// BenchmarkConv2dResNet20 times forward, input gradient and weight gradient
// of a ResNet-20 stage-1 convolution: B=64, 16→16 channels, 3×3, 32×32,
// float32. It reports GFLOP/s counting 2·B·O·C·KH·KW·H'·W' per pass, per
// second of wall time and per second of CPU time over all threads (the
// latter is steadier on a shared machine).
func BenchmarkConv2dResNet20(b *testing.B) {
	const batch, c, o, hw = 64, 16, 16, 32
	g, err := newConvGeom(c, hw, hw, 3, 3, 1, 1)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	randT := func(shape ...int) *tensor.Dense {
		d := make([]float32, tensor.Shape(shape).TotalSize())
		for i := range d {
			d[i] = rng.Float32()*2 - 1
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
	}
	x, w := randT(batch, c, hw, hw), randT(o, c, 3, 3)
	y := randT(batch, o, g.oh, g.ow)
	dy := randT(batch, o, g.oh, g.ow)
	dx := make([]float32, batch*g.imageSize())
	dw := make([]float32, o*g.colRows())
	flops := 2.0 * batch * o * float64(g.colRows()) * float64(g.colCols())
	for _, pass := range []struct {
		name  string
		run   func()
		flops float64
	}{
		{"forward", func() {
			conv2dForward(blas.FP32, g, floats[float32](x), floats[float32](w), nil, floats[float32](y), batch, o)
		}, flops},
		{"input", func() { conv2dBackwardInput(blas.FP32, g, floats[float32](dy), floats[float32](w), dx, batch, o) }, flops},
		{"weight", func() { conv2dBackwardWeight(blas.FP32, g, floats[float32](x), floats[float32](dy), dw, batch, o) }, flops},
		{"all", func() {
			conv2dForward(blas.FP32, g, floats[float32](x), floats[float32](w), nil, floats[float32](y), batch, o)
			conv2dBackwardInput(blas.FP32, g, floats[float32](dy), floats[float32](w), dx, batch, o)
			conv2dBackwardWeight(blas.FP32, g, floats[float32](x), floats[float32](dy), dw, batch, o)
		}, 3 * flops},
	} {
		b.Run(pass.name, func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				pass.run()
			}
			cpu := cpuTime() - cpu0
			b.ReportMetric(pass.flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(pass.flops*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/cpu-s")
		})
	}
}

// cpuTime is the user and system time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
