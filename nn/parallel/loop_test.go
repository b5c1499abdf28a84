package parallel

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vit-train/vit-train/internal/allocs"
)

// countBody adds 1 to every element of its range and records whether a
// range other than the first ran.
type countBody[T int32 | float64] struct {
	data   []T
	spread *atomic.Int32
}

func (k *countBody[T]) Range(lo, hi int) {
	if lo != 0 {
		k.spread.Store(1)
	}
	for i := lo; i < hi; i++ {
		k.data[i]++
	}
}

// addOnes runs countBody from a generic function, as the kernels do.
func addOnes[T int32 | float64](data []T, spread *atomic.Int32) {
	Loop(len(data), 64, countBody[T]{data, spread})
}

func TestLoopCoversEveryIndexOnce(t *testing.T) {
	withProcs(t, 4)
	var spread atomic.Int32
	for _, n := range []int{0, 1, 63, 64, 127, 1000, 4099} {
		data := make([]int32, n)
		for range 3 {
			addOnes(data, &spread)
		}
		for i, v := range data {
			if v != 3 {
				t.Fatalf("n=%d: index %d ran %d times in 3 loops", n, i, v)
			}
		}
	}
	if spread.Load() == 0 {
		t.Fatal("no loop was split")
	}
}

// TestLoopConcurrentAndNested runs loops of one body type from several
// goroutines at once, each range of them running a nested loop: every
// call must get its own copy of the body.
func TestLoopConcurrentAndNested(t *testing.T) {
	withProcs(t, 4)
	const callers, outer, inner = 4, 16, 300
	var wg sync.WaitGroup
	results := make([][][]float64, callers)
	for c := range callers {
		rows := make([][]float64, outer)
		for i := range rows {
			rows[i] = make([]float64, inner)
		}
		results[c] = rows
		wg.Go(func() {
			var spread atomic.Int32
			for range 5 {
				Loop(outer, 1, nestedBody{rows: rows, spread: &spread})
			}
		})
	}
	wg.Wait()
	for c, rows := range results {
		for i, row := range rows {
			for j, v := range row {
				if v != 5 {
					t.Fatalf("caller %d, row %d, column %d: %v, want 5", c, i, j, v)
				}
			}
		}
	}
}

type nestedBody struct {
	rows   [][]float64
	spread *atomic.Int32
}

func (k *nestedBody) Range(lo, hi int) {
	for i := lo; i < hi; i++ {
		addOnes(k.rows[i], k.spread)
	}
}

func TestLoopAllocs(t *testing.T) {
	withProcs(t, 2)
	var spread atomic.Int32
	data32, data64 := make([]int32, 1<<14), make([]float64, 1<<14)
	if a := allocs.Least(0, 500, func() { addOnes(data32, &spread); addOnes(data64, &spread) }); a >= 0.5 {
		t.Fatalf("two Loop calls allocate %v times", a)
	}
	if spread.Load() == 0 {
		t.Fatal("the loop was never split")
	}
	if a := testing.AllocsPerRun(200, func() { addOnes(data32, &spread) }); a != 0 {
		t.Fatalf("Loop at GOMAXPROCS=1 allocates %v times per call", a)
	}
}

// TestLoopReleasesArguments checks that a finished Loop keeps no
// reference to its body's arguments.
func TestLoopReleasesArguments(t *testing.T) {
	var spread atomic.Int32
	addOnes(make([]int32, 100), &spread)
	l := takeLoop[countBody[int32]]()
	defer l.free.put(l)
	if l.body.data != nil || l.body.spread != nil {
		t.Fatal("a free loop still holds its last arguments")
	}
}
