package fmapeak

import (
	"testing"
	"time"
)

// TestLoopCounts checks that the loop runs every multiply-add it is
// credited with: each accumulator ends at iters, the sum at fmas·iters.
func TestLoopCounts(t *testing.T) {
	if len(cpuLoops()) == 0 {
		t.Skip("no FMA loop on this CPU or build")
	}
	for _, l := range cpuLoops() {
		for _, iters := range []int{0, 1, 7, 1000} {
			if got, want := l.run(iters), float32(l.fmas*iters); got != want {
				t.Errorf("%s loop, %d iterations: sum %v, want %v", l.isa, iters, got, want)
			}
		}
	}
}

func TestMeasure(t *testing.T) {
	r := Measure(2, 20*time.Millisecond)
	if r.Threads != 2 {
		t.Errorf("threads = %d, want 2", r.Threads)
	}
	if len(cpuLoops()) == 0 {
		if r.GFLOPs != 0 {
			t.Errorf("no loop, but %v GFLOP/s", r.GFLOPs)
		}
		return
	}
	// Any FMA unit of the last decade does well over 1 GFLOP/s per thread;
	// a loop credited with work it skipped would also show here as an
	// absurd rate (over 10 TFLOP/s on 2 threads).
	if !(r.GFLOPs > 1 && r.GFLOPs < 1e4) || r.ISA == "" {
		t.Errorf("Measure = %+v", r)
	}
	if z := Measure(0, time.Millisecond); z.GFLOPs != 0 {
		t.Errorf("0 threads measured %v GFLOP/s", z.GFLOPs)
	}
}
