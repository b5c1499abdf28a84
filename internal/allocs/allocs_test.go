package allocs

import (
	"runtime"
	"testing"
)

var sink []byte

// TestLeast: a call that allocates is counted in every measurement; one
// that does not, as zero.
func TestLeast(t *testing.T) {
	if RaceDetector {
		t.Skip("the race detector allocates")
	}
	if n := Least(0, 20, func() { sink = make([]byte, 64) }); n < 1 {
		t.Errorf("a call that allocates once counts %v", n)
	}
	buf := make([]byte, 64)
	if n := Least(0, 20, func() { buf[0]++ }); n != 0 {
		t.Errorf("a call that allocates nothing counts %v", n)
	}
}

// TestPerRunThreads: with more Ps than CPUs, f runs on as many Ps as
// CPUs, and GOMAXPROCS is given back afterwards.
func TestPerRunThreads(t *testing.T) {
	cpus := runtime.NumCPU()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cpus + 3))
	most := 0
	PerRun(5, func() { most = max(most, runtime.GOMAXPROCS(0)) })
	if most != cpus {
		t.Errorf("with GOMAXPROCS=%d on %d CPUs, f ran with GOMAXPROCS up to %d", cpus+3, cpus, most)
	}
	if got := runtime.GOMAXPROCS(0); got != cpus+3 {
		t.Errorf("GOMAXPROCS is %d after PerRun, want %d back", got, cpus+3)
	}
}
