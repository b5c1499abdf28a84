package nn

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestInferenceRunsPartialBatches runs a batch of two images through a
// graph of three: the two rows are the closed form of those images, the
// third image is zeroed, and a fill error or an oversized batch stops Run.
func TestInferenceRunsPartialBatches(t *testing.T) {
	gr, weights := linearGraph(t, false, false)
	inf, err := NewInference(gr)
	if err != nil {
		t.Fatal(err)
	}
	if inf.Batch() != testB || inf.ImageSize() != testD {
		t.Fatalf("batch %d of %d values, want %d of %d", inf.Batch(), inf.ImageSize(), testB, testD)
	}
	logits, err := inf.Run(2, func(images []float32) error {
		if len(images) != 2*testD {
			t.Fatalf("fill got %d values, want %d", len(images), 2*testD)
		}
		for i := range images {
			images[i] = float32(i%5) - 2
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := gr.Float32Images()
	for _, v := range x[2*testD:] {
		if v != 0 {
			t.Fatalf("the padding is %v, want zeros", x[2*testD:])
		}
	}
	want := linearLogits(x, weights[0], weights[1])
	if len(logits) != 2*testC {
		t.Fatalf("%d logits, want %d", len(logits), 2*testC)
	}
	for i, v := range logits {
		if math.Abs(float64(v)-want[i]) > 1e-5 {
			t.Fatalf("logit %d = %g, want %g", i, v, want[i])
		}
	}
	bad := errors.New("unreadable image")
	if _, err := inf.Run(1, func([]float32) error { return bad }); !errors.Is(err, bad) {
		t.Fatalf("a failing fill: %v", err)
	}
	if _, err := inf.Run(testB+1, func([]float32) error { return nil }); err == nil || !strings.Contains(err.Error(), "at most 3") {
		t.Fatalf("an oversized batch: %v", err)
	}
	tr, _ := linearGraph(t, true, false)
	if _, err := NewInference(tr); err == nil {
		t.Fatal("a training graph was accepted")
	}
}
