//go:build !openblas

package blas

import (
	"fmt"
	"testing"
)

// BenchmarkKernel times one micro-kernel on packed panels: "hot" keeps
// both panels in L1, "stream" reads a new B panel each call from a block
// of nc columns (as the inner loop of a product does, the block in L2),
// "direct" also reads A in place from rows lda apart.
func BenchmarkKernel(b *testing.B) {
	for _, kern := range cpuKernels() {
		for _, kc := range []int{64, 128, 192, 256, 384} {
			for _, mode := range []string{"hot", "stream", "direct"} {
				b.Run(fmt.Sprintf("%s/k=%d/%s", kern.name, kc, mode), func(b *testing.B) {
					mr, nr := kern.mr, kern.nr
					const nc, lda = 384, 768
					panels := 1
					if mode != "hot" {
						panels = nc / nr
					}
					a := make([]float32, mr*lda)
					bb := make([]float32, nr*kc*panels)
					c := make([]float32, mr*nc)
					for i := range a {
						a[i] = 0.001
					}
					for i := range bb {
						bb[i] = 0.001
					}
					rsa, csa := 1, mr
					if mode == "direct" {
						rsa, csa = lda, 1
					}
					cpu0 := cpuTime()
					for i := 0; i < b.N; i++ {
						q := i % panels
						kern.fn(kc, &a[0], rsa, csa, &bb[q*nr*kc], nr, &c[q*nr], nc, 1, 1, mr, colMask(nr), nil)
					}
					flop := 2 * float64(mr*nr*kc) * float64(b.N)
					b.ReportMetric(flop/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					if cpu := (cpuTime() - cpu0).Seconds(); cpu > 0 {
						b.ReportMetric(flop/cpu/1e9, "GFLOP/cpu-s")
					}
				})
			}
		}
	}
}
