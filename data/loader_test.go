package data

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vit-train/vit-train/augment"
)

// indexDataset returns n (c, h, w) images whose every byte is the index
// (mod 256), labelled index % 10.
func indexDataset(n, c, h, w int) *Memory {
	m := &Memory{Name: "index", N: n, C: c, H: h, W: w, Pix: make([]uint8, n*c*h*w), Labels: make([]int, n), ClassNames: MNISTClasses()}
	for i := 0; i < n; i++ {
		for k := 0; k < c*h*w; k++ {
			m.Pix[i*c*h*w+k] = uint8(i + k%3)
		}
		m.Labels[i] = i % 10
	}
	return m
}

// collect runs an epoch and copies out every batch.
func collect(t *testing.T, l *Loader, epoch, start int) (images [][]float32, labels, indices [][]int) {
	t.Helper()
	it := l.Epoch(epoch, start)
	defer it.Close()
	for it.Next() {
		b := it.Batch()
		images = append(images, append([]float32(nil), b.Images...))
		labels = append(labels, append([]int(nil), b.Labels...))
		indices = append(indices, append([]int(nil), b.Indices...))
		b.Release()
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return
}

func TestLoaderOrderShapesAndNormalisation(t *testing.T) {
	ds := indexDataset(50, 1, 2, 3)
	l, err := NewLoader(LoaderConfig{Dataset: ds, BatchSize: 8, Workers: 3,
		Pipeline: augment.Pipeline{Mean: []float32{0.5}, Std: []float32{0.25}}})
	if err != nil {
		t.Fatal(err)
	}
	if l.NumBatches() != 7 {
		t.Fatalf("%d batches", l.NumBatches())
	}
	imgs, labels, idx := collect(t, l, 0, 0)
	if len(imgs) != 7 || len(labels[6]) != 2 || len(imgs[6]) != 2*6 {
		t.Fatalf("%d batches, last has %d labels %d values", len(imgs), len(labels[6]), len(imgs[6]))
	}
	for k := range imgs {
		for j, i := range idx[k] {
			if i != k*8+j || labels[k][j] != i%10 {
				t.Fatalf("batch %d slot %d: index %d label %d", k, j, i, labels[k][j])
			}
			for p := 0; p < 6; p++ {
				want := (float32(uint8(i+p%3))/255 - 0.5) / 0.25
				if v := imgs[k][j*6+p]; v != want {
					t.Fatalf("batch %d slot %d value %d = %v, want %v", k, j, p, v, want)
				}
			}
		}
	}
	l.cfg.DropLast = true
	if imgs, _, _ := collect(t, l, 0, 0); l.NumBatches() != 6 || len(imgs) != 6 {
		t.Errorf("drop last: %d batches", len(imgs))
	}
}

func TestLoaderShuffle(t *testing.T) {
	ds := indexDataset(103, 1, 1, 1)
	mk := func(seed uint64) *Loader {
		l, err := NewLoader(LoaderConfig{Dataset: ds, BatchSize: 10, Shuffle: true, Seed: seed, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	flat := func(l *Loader, epoch int) []int {
		_, _, idx := collect(t, l, epoch, 0)
		var all []int
		for _, b := range idx {
			all = append(all, b...)
		}
		return all
	}
	a0, a1, b0 := flat(mk(1), 0), flat(mk(1), 1), flat(mk(2), 0)
	seen := make([]bool, 103)
	for _, i := range a0 {
		if seen[i] {
			t.Fatalf("index %d twice", i)
		}
		seen[i] = true
	}
	if len(a0) != 103 {
		t.Fatalf("%d items", len(a0))
	}
	same := func(x, y []int) bool { return fmt.Sprint(x) == fmt.Sprint(y) }
	if !same(a0, flat(mk(1), 0)) {
		t.Error("same seed and epoch gave a different order")
	}
	if same(a0, a1) || same(a0, b0) {
		t.Error("order does not change with epoch or seed")
	}
}

// augLoader is a loader with random augmentation on 3x12x12 images.
func augLoader(t *testing.T, workers int) *Loader {
	t.Helper()
	ds := indexDataset(37, 3, 12, 12)
	for i := range ds.Pix {
		ds.Pix[i] = uint8(i * 7919 % 251)
	}
	mean, std := []float32{0.5, 0.5, 0.5}, []float32{0.2, 0.2, 0.2}
	p, err := augment.TrainPipeline(augment.DeiTTrainConfig(12, mean, std))
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLoader(LoaderConfig{Dataset: ds, BatchSize: 5, Shuffle: true, Seed: 42, Workers: workers, Prefetch: 3, Pipeline: p})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLoaderDeterministicAcrossWorkers(t *testing.T) {
	ref, _, _ := collect(t, augLoader(t, 1), 3, 0)
	for _, w := range []int{2, 5} {
		got, _, _ := collect(t, augLoader(t, w), 3, 0)
		for k := range ref {
			for i := range ref[k] {
				if got[k][i] != ref[k][i] {
					t.Fatalf("workers=%d: batch %d value %d differs", w, k, i)
				}
			}
		}
	}
	other, _, _ := collect(t, augLoader(t, 2), 4, 0)
	if fmt.Sprint(other[0][:20]) == fmt.Sprint(ref[0][:20]) {
		t.Error("epochs 3 and 4 gave the same first batch")
	}
}

func TestLoaderResume(t *testing.T) {
	l := augLoader(t, 2)
	full, fl, _ := collect(t, l, 2, 0)
	part, pl, _ := collect(t, l, 2, 4)
	if len(part) != len(full)-4 {
		t.Fatalf("resumed epoch has %d batches, want %d", len(part), len(full)-4)
	}
	for k := range part {
		if fmt.Sprint(part[k]) != fmt.Sprint(full[k+4]) || fmt.Sprint(pl[k]) != fmt.Sprint(fl[k+4]) {
			t.Fatalf("resumed batch %d differs from batch %d", k, k+4)
		}
	}
	if imgs, _, _ := collect(t, l, 2, l.NumBatches()); len(imgs) != 0 {
		t.Error("start at the end gave batches")
	}
	it := l.Epoch(2, l.NumBatches()+1)
	if it.Next() || it.Err() == nil {
		t.Error("start past the end accepted")
	}
}

func TestLoaderBatchMixDeterministic(t *testing.T) {
	l := augLoader(t, 2)
	mix := augment.NewDeiTMixup(10)
	run := func() ([]float32, []float32) {
		it := l.Epoch(0, 0)
		defer it.Close()
		it.Next()
		b := it.Batch()
		defer b.Release()
		targets := make([]float32, b.N*10)
		if _, err := b.Mix(mix, targets); err != nil {
			t.Fatal(err)
		}
		return append([]float32(nil), b.Images...), targets
	}
	i1, t1 := run()
	i2, t2 := run()
	if fmt.Sprint(i1) != fmt.Sprint(i2) || fmt.Sprint(t1) != fmt.Sprint(t2) {
		t.Error("Mix is not reproducible for the same batch")
	}
	for r := 0; r < 5; r++ {
		var s float32
		for _, v := range t1[r*10 : (r+1)*10] {
			s += v
		}
		if s < 0.9999 || s > 1.0001 {
			t.Errorf("target row %d sums to %v", r, s)
		}
	}
}

// failing fails on one index.
type failing struct{ *Memory }

func (f failing) Item(i int) (augment.Image, int, error) {
	if i == 13 {
		return augment.Image{}, 0, errors.New("data: broken.bin: record 13: bad")
	}
	return f.Memory.Item(i)
}

func TestLoaderErrors(t *testing.T) {
	l, _ := NewLoader(LoaderConfig{Dataset: failing{indexDataset(30, 1, 2, 2)}, BatchSize: 4, Workers: 2})
	_, err := func() (int, error) {
		it := l.Epoch(0, 0)
		defer it.Close()
		n := 0
		for it.Next() {
			n++
			it.Batch().Release()
		}
		return n, it.Err()
	}()
	if err == nil || !strings.Contains(err.Error(), "dataset index 13") || !strings.Contains(err.Error(), "broken.bin") {
		t.Errorf("item error: %v", err)
	}
	l2, _ := NewLoader(LoaderConfig{Dataset: indexDataset(8, 1, 2, 2), BatchSize: 4, Pipeline: augment.Pipeline{Height: 3, Width: 3}})
	it := l2.Epoch(0, 0)
	if it.Next() || it.Err() == nil || !strings.Contains(it.Err().Error(), "want 3x3") {
		t.Errorf("size mismatch: %v", it.Err())
	}
	it.Close()
	for _, cfg := range []LoaderConfig{
		{BatchSize: 2},
		{Dataset: indexDataset(2, 1, 1, 1)},
		{Dataset: indexDataset(2, 1, 1, 1), BatchSize: 1, Workers: -1},
		{Dataset: &ImageFolder{}, BatchSize: 1},
	} {
		if _, err := NewLoader(cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
}

// Batches are recycled: every batch handed out comes back to the pool, and
// a few batches serve many epochs. Closing mid-epoch stops every goroutine.
func TestLoaderRecyclesAndCloses(t *testing.T) {
	l := augLoader(t, 3)
	base := runtime.NumGoroutine()
	for e := 0; e < 4; e++ {
		collect(t, l, e, 0)
	}
	// 4 epochs of 8 batches, at most Prefetch in flight and one held by
	// the consumer: the pool holds every batch allocated, and no more than
	// Prefetch+1 were.
	if l.Outstanding() != 0 || len(l.free) != l.made {
		t.Errorf("%d batches allocated, %d back in the pool", l.made, len(l.free))
	}
	if l.made < 1 || l.made > l.cfg.Prefetch+1 {
		t.Errorf("%d batches allocated for 32 batches with prefetch %d", l.made, l.cfg.Prefetch)
	}
	it := l.Epoch(9, 0)
	it.Next()
	b := it.Batch()
	it.Close()
	if n := l.Outstanding(); n != 1 {
		t.Errorf("after Close with a batch held: %d outstanding, want 1 (the held batch)", n)
	}
	b.Release()
	it.Close()
	if n := l.Outstanding(); n != 0 {
		t.Errorf("after the held batch's release: %d outstanding", n)
	}
	if it.Next() {
		t.Error("Next after Close")
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > base {
		t.Errorf("%d goroutines after Close, %d before", g, base)
	}
}

// A batch released twice enters the pool once, so it is never handed out
// to two holders at the same time.
func TestLoaderDoubleReleaseIsHarmless(t *testing.T) {
	l := augLoader(t, 1)
	it := l.Epoch(0, 0)
	if !it.Next() {
		t.Fatal(it.Err())
	}
	b := it.Batch()
	b.Release()
	b.Release()
	it.Close()
	if n := l.Outstanding(); n != 0 {
		t.Fatalf("%d outstanding", n)
	}
	seen := map[*Batch]bool{}
	for range l.made {
		x := l.getBatch()
		if seen[x] {
			t.Fatal("the pool handed out the same batch twice")
		}
		seen[x] = true
	}
}

func TestStreamSeedsDiffer(t *testing.T) {
	seen := map[[2]uint64]bool{}
	for _, seed := range []uint64{0, 1, 7} {
		for _, s := range []uint64{streamShuffle, streamItem, streamBatch} {
			for e := 0; e < 3; e++ {
				for i := 0; i < 100; i++ {
					a, b := streamSeed(seed, s, e, i)
					if seen[[2]uint64{a, b}] {
						t.Fatalf("seed collision at seed %d stream %x epoch %d index %d", seed, s, e, i)
					}
					seen[[2]uint64{a, b}] = true
				}
			}
		}
	}
}

// The streams are pinned: a resumed run, or a run with another version,
// draws the same orders and augmentations only while streamSeed gives
// these values (SplitMix64 of seed, stream, epoch and index, computed
// independently).
func TestStreamSeedsArePinned(t *testing.T) {
	for _, c := range []struct {
		seed, stream uint64
		epoch, i     int
		a, b         uint64
	}{
		{0, streamShuffle, 0, 0, 0xd9ae8b74e010644a, 0xa37e62ab71cd9850},
		{42, streamItem, 3, 17, 0xbb54d00fcde574a1, 0x92bf29420b4cbb26},
		{7, streamBatch, 1, 5, 0x9293bb219320f6d9, 0x924d3cee016a41f2},
	} {
		if a, b := streamSeed(c.seed, c.stream, c.epoch, c.i); a != c.a || b != c.b {
			t.Errorf("streamSeed(%d, %#x, %d, %d) = %#x, %#x, want %#x, %#x", c.seed, c.stream, c.epoch, c.i, a, b, c.a, c.b)
		}
	}
	// The shuffle of epoch 0 with seed 0 follows from its stream.
	l, err := NewLoader(LoaderConfig{Dataset: indexDataset(10, 1, 1, 1), BatchSize: 5, Shuffle: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	rand.New(rand.NewPCG(0xd9ae8b74e010644a, 0xa37e62ab71cd9850)).Shuffle(10, func(i, j int) { want[i], want[j] = want[j], want[i] })
	if got := l.order(0); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("epoch 0 order %v, want %v", got, want)
	}
}
