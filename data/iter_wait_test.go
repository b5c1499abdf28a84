package data

import (
	"testing"
	"time"

	"github.com/vit-train/vit-train/augment"
)

// slowDataset delays every item.
type slowDataset struct {
	Dataset
	delay time.Duration
}

func (s slowDataset) Item(i int) (augment.Image, int, error) {
	time.Sleep(s.delay)
	return s.Dataset.Item(i)
}

// Waited counts the time Next waits for the workers, and not the time the
// consumer spends between calls.
func TestIterWaited(t *testing.T) {
	waited := func(ds Dataset, consume time.Duration) time.Duration {
		l, err := NewLoader(LoaderConfig{Dataset: ds, BatchSize: 2, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		it := l.Epoch(0, 0)
		defer it.Close()
		for it.Next() {
			time.Sleep(consume)
			it.Batch().Release()
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		return it.Waited()
	}
	ds := indexDataset(8, 1, 2, 2)
	// 8 items of 10 ms on one worker, consumed at once: about 80 ms waited.
	if w := waited(slowDataset{ds, 10 * time.Millisecond}, 0); w < 40*time.Millisecond {
		t.Errorf("a slow data set: waited %v, want about 80 ms", w)
	}
	// Fast items, a consumer taking 50 ms a batch (200 ms in all): the
	// workers keep ahead, and only the first batch is waited for.
	if w := waited(ds, 50*time.Millisecond); w > 100*time.Millisecond {
		t.Errorf("a slow consumer: waited %v, want about 0", w)
	}
}
