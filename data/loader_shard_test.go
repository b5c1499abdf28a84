package data

import (
	"fmt"
	"testing"

	"github.com/vit-train/vit-train/augment"
)

// TestLoaderShardsMatchOneProcess checks that 2 ranks with batches of b
// items see, batch by batch, the items and augmented images of one process
// with batches of 2b (as multisets), that the padded training shares have
// equal lengths and that the uneven evaluation shares cover the dataset
// once.
func TestLoaderShardsMatchOneProcess(t *testing.T) {
	ds := indexDataset(40, 1, 4, 4)
	pipe := augment.Pipeline{Transform: augment.RandomCrop{H: 4, W: 4, Padding: 1}}
	cfg := LoaderConfig{Dataset: ds, BatchSize: 8, DropLast: true, Shuffle: true, Seed: 9, Workers: 2, Pipeline: pipe}
	one, err := NewLoader(cfg)
	if err != nil {
		t.Fatal(err)
	}
	imgs1, _, idx1 := collect(t, one, 3, 0)
	const ranks = 2
	var imgsR [ranks][][]float32
	var idxR [ranks][][]int
	for r := range ranks {
		c := cfg
		c.BatchSize, c.Rank, c.Replicas = cfg.BatchSize/ranks, r, ranks
		l, err := NewLoader(c)
		if err != nil {
			t.Fatal(err)
		}
		if l.NumBatches() != one.NumBatches() || l.Len() != 20 {
			t.Fatalf("rank %d: %d batches of %d items, want %d of 20", r, l.NumBatches(), l.Len(), one.NumBatches())
		}
		imgsR[r], _, idxR[r] = collect(t, l, 3, 0)
	}
	size := 16
	for k := range idx1 {
		want := map[int][]float32{}
		for j, i := range idx1[k] {
			want[i] = imgs1[k][j*size : (j+1)*size]
		}
		got := 0
		for r := range ranks {
			for j, i := range idxR[r][k] {
				w, ok := want[i]
				if !ok {
					t.Fatalf("batch %d: rank %d has item %d, not in the single process's batch %v", k, r, i, idx1[k])
				}
				if fmt.Sprint(w) != fmt.Sprint(imgsR[r][k][j*size:(j+1)*size]) {
					t.Fatalf("batch %d item %d: rank %d augmented it differently", k, i, r)
				}
				got++
			}
		}
		if got != len(idx1[k]) {
			t.Fatalf("batch %d: the ranks hold %d items, want %d", k, got, len(idx1[k]))
		}
	}

	// Padded training shares of 7 items over 3 ranks: 3 each.
	small := indexDataset(7, 1, 4, 4)
	seen := map[int]int{}
	for r := range 3 {
		l, err := NewLoader(LoaderConfig{Dataset: small, BatchSize: 2, Rank: r, Replicas: 3, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if l.Len() != 3 || l.NumBatches() != 2 {
			t.Fatalf("padded rank %d: %d items, %d batches; want 3, 2", r, l.Len(), l.NumBatches())
		}
		// Uneven evaluation shares: 3, 2, 2 items, each item once.
		u, err := NewLoader(LoaderConfig{Dataset: small, BatchSize: 2, Rank: r, Replicas: 3, UnevenShards: true, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		_, _, idx := collect(t, u, 0, 0)
		n := 0
		for _, b := range idx {
			for _, i := range b {
				seen[i]++
				n++
			}
		}
		if n != u.Len() || n != []int{3, 2, 2}[r] {
			t.Fatalf("uneven rank %d: %d items (Len %d)", r, n, u.Len())
		}
	}
	for i := range 7 {
		if seen[i] != 1 {
			t.Fatalf("uneven shares: item %d seen %d times", i, seen[i])
		}
	}
	if _, err := NewLoader(LoaderConfig{Dataset: small, BatchSize: 2, Rank: 3, Replicas: 3}); err == nil {
		t.Fatal("rank 3 of 3 accepted")
	}
}
