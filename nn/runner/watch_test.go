package runner_test

import (
	"errors"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"

	"github.com/vit-train/vit-train/nn/runner"
)

// TestWatchReportsGradientsAsTheBackwardPassComputesThem differentiates a
// chain of four Linear layers: the last layer's weight gradient is final
// first, the first layer's last, each exactly once, and each already holds
// the value it has at the end of the run when it is reported.
func TestWatchReportsGradientsAsTheBackwardPassComputesThem(t *testing.T) {
	const n, d = 3, 5
	g, x, _, y := chain(t, n, d)
	loss, err := gorgonia.Sum(y)
	if err != nil {
		t.Fatal(err)
	}
	var weights []*gorgonia.Node
	for _, name := range []string{"a", "b", "c", "d"} {
		weights = append(weights, g.ByName(name)[0])
	}
	grads, err := gorgonia.Grad(loss, weights...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := runner.Compile(g, append([]*gorgonia.Node{loss}, grads...)...)
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Watch(append(grads, x))
	if err != nil {
		t.Fatal(err)
	}
	var order []int
	seen := map[int][]float64{}
	err = p.RunWatch(w, func(k int) error {
		order = append(order, k)
		if k < len(grads) {
			seen[k] = append([]float64(nil), p.Value(grads[k]).Data().([]float64)...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// x, an input, first; then d's gradient before c's, b's and a's.
	if want := []int{4, 3, 2, 1, 0}; !slices.Equal(order, want) {
		t.Fatalf("reported %v, want %v", order, want)
	}
	for k, gr := range grads {
		if !slices.Equal(seen[k], p.Value(gr).Data().([]float64)) {
			t.Fatalf("gradient %d changed after it was reported", k)
		}
	}
	// An error from ready stops the run; a watch of another program is refused.
	stop := errors.New("stop")
	if err := p.RunWatch(w, func(k int) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("want the callback's error, got %v", err)
	}
	other, err := runner.Compile(g, loss)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.RunWatch(w, func(int) error { return nil }); err == nil {
		t.Fatal("a watch of another program was accepted")
	}
	if _, err := other.Watch(grads); err == nil {
		t.Fatal("watching nodes outside the program was accepted")
	}
}
