//go:build !openblas

package blas

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/nn/fmapeak"
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

// BenchmarkStrip times the amx kernel's strip alone on packed operands,
// where this processor runs it: an A panel of 32 rows and kp pairs (rows
// 4·kp bytes apart, in L1) over 8 B panels of kp pairs by 32 columns (a
// block in L2), into C of ldc 768 as a ViT-B projection's; "last" ends
// in C through the epilogue, "carried" stores the sums for the next K
// block, as blockStrips does with every block but the last. The
// "memory" cases move on to the next 32 rows of A and C with every
// call, through a product of 6,304 rows (ViT-B/16's at batch 32), as
// blockStrips does: A and C come from memory rather than L1. In the "l1"
// case every tile reads the same B panel, so that both operands stay in
// L1: the kernel fed as fast as it can be. Each rate's share of the tile
// peak on one thread is "%peak".
func BenchmarkStrip(b *testing.B) {
	kern := lowKernel(AMX)
	if kern == nil || kern.strip == nil {
		b.Skip("the amx kernel does not run here")
	}
	const panels, ldc, rowPanels = 8, 768, 197
	for _, kp := range []int{32, 64, 128, 192} {
		for _, mode := range []string{"last", "carried", "last/memory", "carried/memory", "carried/l1"} {
			b.Run(fmt.Sprintf("k=%d/%s", 2*kp, mode), func(b *testing.B) {
				walk := 1
				if strings.HasSuffix(mode, "/memory") {
					walk = rowPanels
				}
				a := alignedFloats(32 * kp * walk)
				bp := alignedFloats(32 * kp * panels)
				c := alignedFloats(32 * ldc * walk)
				sums := alignedFloats(32 * 32 * panels)
				flags := 0
				if strings.HasPrefix(mode, "carried") {
					flags = stripCarriedIn | stripCarriedOut
				}
				panelStride := 32 * kp
				if strings.HasSuffix(mode, "/l1") {
					panelStride = 0
				}
				b.ResetTimer()
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					r := i % walk
					kern.strip(kp, &a[r*32*kp], kp, &bp[0], 32, panelStride, panels, &c[r*32*ldc], ldc, 1, 0, 32, colMask(32), nil, &sums[0], flags, 1)
				}
				flop := 2 * float64(32*32*2*kp*panels) * float64(b.N)
				rate := flop / b.Elapsed().Seconds() / 1e9
				b.ReportMetric(rate, "GFLOP/s")
				if cpu := (cpuTime() - cpu0).Seconds(); cpu > 0 {
					b.ReportMetric(flop/cpu/1e9, "GFLOP/cpu-s")
				}
				b.StopTimer()
				reportPeakShareOn(b, fmapeak.AMX, 1, rate)
			})
		}
	}
}
