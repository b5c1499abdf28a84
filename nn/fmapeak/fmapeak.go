// Package fmapeak measures the processor's peak multiply-add throughput
// for each kind of arithmetic the matrix kernels use, the yardstick
// `vit-train bench` reports its GFLOP/s against, and names the processor.
//
// Each thread runs a loop of independent multiply-add instructions on the
// widest vectors the CPU has, enough of them in flight to cover the
// latency of every pipe, with no memory traffic: no real kernel of that
// kind can go faster. The kinds are float32 FMA (VFMADD231PS, AVX-512 or
// AVX2+FMA), bfloat16 pair dot products into float32 (VDPBF16PS,
// AVX512_BF16), float16 FMA (VFMADD231PH, AVX512_FP16) and bfloat16 tile
// products (TDPBF16PS, AMX-BF16, see TilesUsable); a GFLOP counts
// 2 per multiply-add per lane whatever the kind. Measure runs one loop per
// thread, every thread locked to its OS thread and all at once, so the
// figure includes what the cores lose to each other (shared power and
// clocks); it warms the cores up first and keeps the best of several
// tries, so that a moment of other work on a core lowers only one try.
package fmapeak

import (
	"runtime"
	"sync"
	"time"
)

// Kind is a kind of multiply-add arithmetic.
type Kind string

const (
	// FP32 is float32 FMA: VFMADD231PS.
	FP32 Kind = "fp32"
	// BF16 is bfloat16 products summed in pairs into float32: VDPBF16PS.
	BF16 Kind = "bf16"
	// FP16 is float16 FMA: VFMADD231PH.
	FP16 Kind = "fp16"
	// AMX is bfloat16 tile products summed into float32 tiles: TDPBF16PS
	// (AMX-BF16), 16×16 outputs of 32 products each per instruction.
	AMX Kind = "amx"
)

// Result is one measurement: GFLOPs (2 per multiply-add per lane) per
// second over all threads, the kind, the instruction set extension used
// and the threads. GFLOPs is 0 where no loop of the kind runs (other
// CPUs, the purego build).
type Result struct {
	Kind    Kind    `json:"kind"`
	GFLOPs  float64 `json:"gflop_per_s"`
	ISA     string  `json:"isa"`
	Threads int     `json:"threads"`
}

// loop is one assembly loop: iters iterations of insns instructions of
// flops floating-point operations each, whose result is count·iters
// (count·min(iters, saturates) when saturates > 0).
type loop struct {
	kind         Kind
	isa          string
	insns, flops int
	count        int
	saturates    int
	run          func(iters int) float32
}

// Kinds lists the kinds this CPU and build run, FP32 first.
func Kinds() []Kind {
	var ks []Kind
	for _, l := range cpuLoops() {
		if len(ks) == 0 || ks[len(ks)-1] != l.kind {
			ks = append(ks, l.kind)
		}
	}
	return ks
}

// Has reports whether this CPU and build run kind's instructions.
func Has(kind Kind) bool { return loopOf(kind) != nil }

// loopOf returns the widest loop of kind, nil if none runs here.
func loopOf(kind Kind) *loop {
	for _, l := range cpuLoops() {
		if l.kind == kind {
			return l
		}
	}
	return nil
}

// Tries is how many times Measure times the loops; it keeps the best.
const Tries = 5

// Measure runs kind's loop on threads threads at once for about d in
// all, after a warm-up of up to d/4, and returns the best rate of Tries
// tries.
func Measure(kind Kind, threads int, d time.Duration) Result {
	l := loopOf(kind)
	if l == nil || threads < 1 {
		return Result{Kind: kind, Threads: threads}
	}
	iters := calibrate(l, 100*time.Microsecond)
	t := startThreads(threads, l, iters)
	defer t.stop()
	t.try(d / 4) // warm-up: clocks and power settle
	best := 0.0
	for range Tries {
		best = max(best, t.try(d/Tries))
	}
	return Result{Kind: kind, GFLOPs: best / 1e9, ISA: l.isa, Threads: threads}
}

// PeakAbove measures kind's peak on threads threads, as Measure does for
// half a second, for comparison with rate, GFLOP/s measured on the same
// threads. A rate above the peak is an error of the peak's measurement
// (other work on a core while it ran): the peak is measured again, for
// two seconds, and the higher kept; a rate still above it then becomes
// the peak, and raised is true, since the processor has shown it can go
// that fast. So rate/peak is never above 1.
func PeakAbove(kind Kind, threads int, rate float64) (peak Result, raised bool) {
	peak = Measure(kind, threads, 500*time.Millisecond)
	if peak.GFLOPs <= 0 {
		return peak, false
	}
	if rate > peak.GFLOPs {
		again := Measure(kind, threads, 2*time.Second)
		peak.GFLOPs = max(peak.GFLOPs, again.GFLOPs)
	}
	if rate > peak.GFLOPs {
		peak.GFLOPs, raised = rate, true
	}
	return peak, raised
}

// calibrate returns iterations of l that take about d on one thread.
func calibrate(l *loop, d time.Duration) int {
	iters := 1 << 8
	for iters < 1<<30 {
		t := time.Now()
		l.run(iters)
		if time.Since(t) > d {
			break
		}
		iters *= 2
	}
	return iters
}

// threads are goroutines locked to their OS threads, each running l in
// chunks of iters iterations when told to.
type threads struct {
	l     *loop
	iters int
	start []chan time.Time // one per thread: run until the time sent
	done  chan int         // chunks each thread ran
}

func startThreads(n int, l *loop, iters int) *threads {
	t := &threads{l: l, iters: iters, start: make([]chan time.Time, n), done: make(chan int, n)}
	var ready sync.WaitGroup
	for i := range n {
		t.start[i] = make(chan time.Time)
		ready.Add(1)
		go func(start chan time.Time) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ready.Done()
			for until := range start {
				chunks := 0
				for time.Now().Before(until) {
					l.run(iters)
					chunks++
				}
				t.done <- chunks
			}
		}(t.start[i])
	}
	ready.Wait()
	return t
}

// try runs every thread for about d and returns their combined rate in
// FLOP/s, over the time from the start to the last thread's end.
func (t *threads) try(d time.Duration) float64 {
	begin := time.Now()
	until := begin.Add(d)
	for _, s := range t.start {
		s <- until
	}
	chunks := 0
	for range t.start {
		chunks += <-t.done
	}
	el := time.Since(begin).Seconds()
	return float64(chunks) * float64(t.iters) * float64(t.l.insns*t.l.flops) / el
}

func (t *threads) stop() {
	for _, s := range t.start {
		close(s)
	}
}
