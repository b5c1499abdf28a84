package data

import (
	"slices"
	"strings"
	"testing"
)

// labelled is a dataset of n one-pixel images whose label is their index
// modulo 10 and whose pixel is their index modulo 256.
func labelled(n int) *Memory {
	m := &Memory{Name: "labelled", N: n, C: 1, H: 1, W: 1, Pix: make([]uint8, n), Labels: make([]int, n), ClassNames: make([]string, 10)}
	for i := range n {
		m.Pix[i], m.Labels[i] = uint8(i), i%10
	}
	return m
}

func TestHoldOutIsASeededPartition(t *testing.T) {
	ds := labelled(1000)
	train, val, err := HoldOut(ds, 0.1, 7)
	if err != nil {
		t.Fatal(err)
	}
	if val.Len() != 100 || train.Len() != 900 {
		t.Fatalf("parts of %d and %d, want 900 and 100", train.Len(), val.Len())
	}
	// Every index once, in one part; each part in the dataset's order.
	all := append(slices.Clone(train.Indices), val.Indices...)
	slices.Sort(all)
	for i, j := range all {
		if i != j {
			t.Fatalf("the parts do not partition the dataset: index %d at %d", j, i)
		}
	}
	if !slices.IsSorted(train.Indices) || !slices.IsSorted(val.Indices) {
		t.Error("a part is not in the dataset's order")
	}
	// Not the first or last items: a draw.
	if val.Indices[0] == 0 && val.Indices[99] == 99 || val.Indices[0] == 900 {
		t.Errorf("held-out indices %v… are not drawn", val.Indices[:5])
	}
	// A view's item is the dataset's item at its index.
	img, label, err := val.Item(3)
	if want := val.Indices[3]; err != nil || label != want%10 || img.Pix[0] != float32(uint8(want))/255 {
		t.Errorf("val.Item(3) = label %d, pixel %v, %v; want item %d", label, img.Pix[0], err, want)
	}
	if _, _, err := val.Item(100); err == nil {
		t.Error("item past the view's end accepted")
	}
	// The same seed gives the same split; another seed another.
	_, again, _ := HoldOut(ds, 0.1, 7)
	_, other, _ := HoldOut(ds, 0.1, 8)
	if !slices.Equal(again.Indices, val.Indices) || slices.Equal(other.Indices, val.Indices) {
		t.Error("the split does not follow its seed")
	}
}

func TestHoldOutRefusesFractionsThatLeaveAPartEmpty(t *testing.T) {
	ds := labelled(10)
	for _, f := range []float64{0, -0.1, 1, 1.5, 0.01, 0.97} {
		if _, _, err := HoldOut(ds, f, 0); err == nil || !strings.Contains(err.Error(), "held-out fraction") {
			t.Errorf("fraction %v: %v", f, err)
		}
	}
	if _, val, err := HoldOut(ds, 0.5, 0); err != nil || val.Len() != 5 {
		t.Errorf("fraction 0.5 of 10: %d held out, %v", val.Len(), err)
	}
}
