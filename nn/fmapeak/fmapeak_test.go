package fmapeak

import (
	"testing"
	"time"
)

// TestLoopCounts checks that each loop runs every multiply-add it is
// credited with: its result is the multiply-adds one lane did.
func TestLoopCounts(t *testing.T) {
	if len(cpuLoops()) == 0 {
		t.Skip("no multiply-add loop on this CPU or build")
	}
	for _, l := range cpuLoops() {
		t.Logf("%s loop (%s) runs here", l.kind, l.isa)
		for _, iters := range []int{0, 1, 7, 1000, 3000} {
			n := iters
			if l.saturates > 0 {
				n = min(n, l.saturates)
			}
			if got, want := l.run(iters), float32(l.count*n); got != want {
				t.Errorf("%s loop, %d iterations: sum %v, want %v", l.isa, iters, got, want)
			}
		}
	}
	for _, k := range []Kind{BF16, FP16, AMX} {
		if !Has(k) {
			t.Logf("no %s loop on this CPU or build: not tested", k)
		}
	}
}

func TestMeasure(t *testing.T) {
	kinds := Kinds()
	if len(kinds) == 0 {
		if r := Measure(FP32, 2, 20*time.Millisecond); r.GFLOPs != 0 {
			t.Errorf("no loop, but %v GFLOP/s", r.GFLOPs)
		}
		return
	}
	if kinds[0] != FP32 {
		t.Errorf("Kinds() = %v, want FP32 first", kinds)
	}
	for _, k := range kinds {
		r := Measure(k, 2, 20*time.Millisecond)
		if r.Threads != 2 || r.Kind != k {
			t.Errorf("Measure(%s) = %+v", k, r)
		}
		// Any multiply-add unit of the last decade does well over 1
		// GFLOP/s per thread; a loop credited with work it skipped would
		// also show here as an absurd rate (over 20 TFLOP/s on 2 threads).
		if !(r.GFLOPs > 1 && r.GFLOPs < 2e4) || r.ISA == "" {
			t.Errorf("Measure(%s) = %+v", k, r)
		}
		t.Logf("%s: %.1f GFLOP/s on 2 threads (%s)", k, r.GFLOPs, r.ISA)
	}
	if z := Measure(FP32, 0, time.Millisecond); z.GFLOPs != 0 {
		t.Errorf("0 threads measured %v GFLOP/s", z.GFLOPs)
	}
	if z := Measure("fp8", 1, time.Millisecond); z.GFLOPs != 0 {
		t.Errorf("an unknown kind measured %v GFLOP/s", z.GFLOPs)
	}
}

// TestPeakAbove checks that a rate below the measured peak leaves it as
// measured, that a rate no measurement can reach becomes the peak, and
// that a kind with no loop here has no peak.
func TestPeakAbove(t *testing.T) {
	if z, raised := PeakAbove("fp8", 1, 5); z.GFLOPs != 0 || raised {
		t.Errorf("an unknown kind: peak %+v, raised %v", z, raised)
	}
	if !Has(FP32) {
		t.Skip("no float32 loop on this CPU or build")
	}
	low, raised := PeakAbove(FP32, 1, 0.5)
	if raised || !(low.GFLOPs > 1 && low.GFLOPs < 1e4) || low.Threads != 1 || low.Kind != FP32 || low.ISA == "" {
		t.Errorf("a rate of 0.5 GFLOP/s: peak %+v, raised %v", low, raised)
	}
	const absurd = 1e9
	high, raised := PeakAbove(FP32, 1, absurd)
	if !raised || high.GFLOPs != absurd || high.Threads != 1 || high.Kind != FP32 {
		t.Errorf("a rate of %g GFLOP/s: peak %+v, raised %v", absurd, high, raised)
	}
}
