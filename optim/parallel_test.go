package optim

import (
	"sync/atomic"
	"testing"
)

func TestPartitionCoversEveryElementOnce(t *testing.T) {
	sizes := []int{3*grain + 5, 7, 0, 11 * 13, 2*grain - 3, 1, grain}
	p := newPartition(sizes)
	seen := make([][]int, len(sizes))
	for i, n := range sizes {
		seen[i] = make([]int, n)
	}
	for u := range p.units() {
		total := 0
		for _, s := range p.unit(u) {
			for i := s.lo; i < s.hi; i++ {
				seen[s.t][i]++
			}
			total += s.hi - s.lo
		}
		if total > grain || (total < grain && u != p.units()-1) {
			t.Errorf("unit %d has %d elements, want %d (fewer only for the last)", u, total, grain)
		}
	}
	for ti, s := range seen {
		for i, c := range s {
			if c != 1 {
				t.Fatalf("tensor %d element %d covered %d times", ti, i, c)
			}
		}
	}
}

func TestJobRunsEveryUnitOnce(t *testing.T) {
	counts := make([]atomic.Int32, 1000)
	j := job{n: len(counts), fn: func(u int) { counts[u].Add(1) }}
	for range 3 {
		j.run()
	}
	for u := range counts {
		if c := counts[u].Load(); c != 3 {
			t.Fatalf("unit %d ran %d times, want 3", u, c)
		}
	}
}
