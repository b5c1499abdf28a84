// Package fmapeak measures the processor's peak float32 multiply-add
// throughput, the yardstick `vit-train bench` reports its GFLOP/s against.
//
// Each thread runs a loop of independent fused multiply-adds on the widest
// vectors the CPU has (AVX-512 or AVX2+FMA), enough of them in flight to
// fill both FMA pipes, with no memory traffic: no real kernel can go
// faster. Measure runs one such loop per thread at once, so the figure
// includes what the cores lose to each other (shared power and clocks).
package fmapeak

import (
	"sync"
	"time"
)

// Result is one measurement: GFLOPs (2 per multiply-add per lane) per
// second over all threads, the vector extension used, and the threads.
// GFLOPs is 0 where no assembly loop runs (other CPUs, the purego build).
type Result struct {
	GFLOPs  float64 `json:"gflop_per_s"`
	ISA     string  `json:"isa"`
	Threads int     `json:"threads"`
}

// loop is one assembly loop: iters iterations of fmas multiply-adds of
// lanes float32 lanes each.
type loop struct {
	isa         string
	fmas, lanes int
	run         func(iters int) float32
}

// Measure runs the loop on threads goroutines at once for about d and
// returns their combined rate.
func Measure(threads int, d time.Duration) Result {
	ls := cpuLoops()
	if len(ls) == 0 || threads < 1 {
		return Result{Threads: threads}
	}
	l := ls[0]
	// Calibrate a chunk of about 1 ms on one thread.
	iters := 1 << 12
	for {
		t := time.Now()
		l.run(iters)
		if el := time.Since(t); el > time.Millisecond || iters >= 1<<30 {
			break
		}
		iters *= 2
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total int
	)
	start := time.Now()
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for time.Since(start) < d {
				l.run(iters)
				n += iters
			}
			mu.Lock()
			total += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	flops := 2 * float64(total) * float64(l.fmas*l.lanes)
	return Result{GFLOPs: flops / el / 1e9, ISA: l.isa, Threads: threads}
}
