package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vit-train/vit-train/internal/allocs"
)

// cover runs For(n, grain) and checks that every index is visited once,
// that ranges respect the grain and that there are as many of them as
// Chunks says.
func cover(t *testing.T, n, grain int) {
	t.Helper()
	seen := make([]atomic.Int32, max(n, 0))
	var calls atomic.Int32
	var bad atomic.Value
	For(n, grain, func(lo, hi int) {
		calls.Add(1)
		if lo < 0 || hi > n || lo >= hi {
			bad.Store([2]int{lo, hi})
			return
		}
		if hi-lo < max(grain, 1) && hi != n {
			bad.Store([2]int{lo, hi})
		}
		for i := lo; i < hi; i++ {
			seen[i].Add(1)
		}
	})
	if v := bad.Load(); v != nil {
		t.Fatalf("For(%d, %d): bad range %v", n, grain, v)
	}
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Fatalf("For(%d, %d): index %d visited %d times", n, grain, i, c)
		}
	}
	if c := int(calls.Load()); c > chunksPerWorker*runtime.GOMAXPROCS(0) && c > 1 {
		t.Fatalf("For(%d, %d): %d calls of fn", n, grain, c)
	}
	// The ranges Chunks counts, or one where no worker was idle.
	if c := int(calls.Load()); n > 0 && c != Chunks(n, grain) && c != 1 {
		t.Fatalf("For(%d, %d): %d calls of fn, Chunks says %d", n, grain, c, Chunks(n, grain))
	}
	if n <= 0 && calls.Load() != 0 {
		t.Fatalf("For(%d, %d) called fn", n, grain)
	}
}

func withProcs(t *testing.T, procs int) {
	old := runtime.GOMAXPROCS(procs)
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

func TestForCoverage(t *testing.T) {
	for _, procs := range []int{1, 2, 3, 8} {
		withProcs(t, procs)
		for _, n := range []int{-1, 0, 1, 2, 3, 7, 8, 31, 100, 1000, 12345} {
			for _, grain := range []int{-3, 0, 1, 2, 5, 64, 5000} {
				cover(t, n, grain)
			}
		}
	}
}

// TestForRunsOnWorkers checks that large loops do spread over goroutines:
// two chunks wait for each other, which only completes if they run
// concurrently.
func TestForRunsOnWorkers(t *testing.T) {
	withProcs(t, 2)
	for range 100 {
		// A worker that has just helped may not be idle yet.
		pool.take(nil, 2) // start the workers
		for {
			pool.mu.Lock()
			idle := len(pool.idle)
			pool.mu.Unlock()
			if idle > 0 {
				break
			}
			runtime.Gosched()
		}
		var arrived atomic.Int32
		done := make(chan struct{})
		go func() {
			For(2, 1, func(lo, hi int) {
				arrived.Add(1)
				deadline := time.Now().Add(10 * time.Second)
				for arrived.Load() < 2 && time.Now().Before(deadline) {
					runtime.Gosched()
				}
			})
			close(done)
		}()
		<-done
		if arrived.Load() != 2 {
			t.Fatalf("chunks did not run concurrently")
		}
	}
}

func TestForConcurrentCallers(t *testing.T) {
	withProcs(t, 4)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range 200 {
				n := 1 + (g*131+it*17)%3000
				var sum atomic.Int64
				For(n, 1+it%7, func(lo, hi int) {
					s := 0
					for i := lo; i < hi; i++ {
						s += i
					}
					sum.Add(int64(s))
				})
				if want := int64(n) * int64(n-1) / 2; sum.Load() != want {
					t.Errorf("sum over %d = %d, want %d", n, sum.Load(), want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestForNested runs loops inside loops, three deep, from several
// goroutines; a deadlock shows as a timeout.
func TestForNested(t *testing.T) {
	withProcs(t, 3)
	done := make(chan struct{})
	var total atomic.Int64
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					For(16, 1, func(lo, hi int) {
						for range hi - lo {
							For(8, 1, func(lo, hi int) {
								for range hi - lo {
									For(4, 1, func(lo, hi int) { total.Add(int64(hi - lo)) })
								}
							})
						}
					})
				}
			}()
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("nested For did not finish: deadlock")
	}
	if want := int64(4 * 20 * 16 * 8 * 4); total.Load() != want {
		t.Fatalf("nested loops ran %d innermost indices, want %d", total.Load(), want)
	}
}

func TestForPanic(t *testing.T) {
	withProcs(t, 2)
	for _, bad := range []int{0, 7} { // the caller's first chunk, and a later one
		var ran atomic.Int32
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Fatalf("recovered %v, want boom", r)
				}
				if ran.Load() != 8 {
					t.Fatalf("%d indices ran before For panicked, want all 8", ran.Load())
				}
			}()
			For(8, 1, func(lo, hi int) {
				ran.Add(int32(hi - lo))
				if lo <= bad && bad < hi {
					panic("boom")
				}
			})
			t.Fatal("For did not panic")
		}()
	}
	cover(t, 1000, 1) // the pool still works
}

func TestForAllocs(t *testing.T) {
	withProcs(t, 2)
	data := make([]float64, 1<<14)
	fn := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			data[i] += 1
		}
	}
	if a := allocs.Least(0, 500, func() { For(len(data), 64, fn) }); a >= 0.5 {
		t.Fatalf("For allocates %v times per call", a)
	}
	// The calls above are shorter than a worker takes to wake on a busy
	// machine (or to go idle again after the call before), so whether a
	// helper joined them is left to chance. Here the first chunk waits a
	// while for another to run beside it, over up to 50 calls.
	var first, spread atomic.Int32
	for try := 0; try < 50 && spread.Load() == 0; try++ {
		For(len(data), 64, func(lo, hi int) {
			if lo != 0 {
				if first.Load() == 1 {
					spread.Store(1)
				}
				return
			}
			first.Store(1)
			for deadline := time.Now().Add(20 * time.Millisecond); spread.Load() == 0 && time.Now().Before(deadline); {
				runtime.Gosched()
			}
			first.Store(0)
		})
	}
	if spread.Load() == 0 {
		t.Fatal("the loop was never split")
	}
	if a := testing.AllocsPerRun(200, func() { For(len(data), 64, fn) }); a != 0 {
		t.Fatalf("For at GOMAXPROCS=1 allocates %v times per call", a)
	}
}

func BenchmarkForOverhead(b *testing.B) {
	var sink atomic.Int64
	fn := func(lo, hi int) { sink.Add(int64(hi - lo)) }
	for b.Loop() {
		For(64, 1, fn)
	}
}
