package optim

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vit-train/vit-train/internal/hugepages"
)

// Name prefixes of the state tensors in a checkpoint: an optimiser's
// ("optim.step", "optim.exp_avg.<param>", …) and the EMA's ("ema.<param>").
const (
	OptimizerPrefix = "optim."
	EMAPrefix       = "ema."
)

const (
	stepTensorName = OptimizerPrefix + "step"
	// maxStep bounds the step count read back from a state tensor. A
	// float32 holds step counts exactly up to 2^24; beyond that the saved
	// count is rounded, which only touches AdamW's bias correction, by then
	// equal to 1 in float32.
	maxStep = 1 << 40
)

// stepTensor exports a step count as a one-element tensor of shape (1,).
func stepTensor(step int) Tensor {
	return Tensor{Name: stepTensorName, Shape: []int{1}, Data: []float32{float32(step)}}
}

// stateTensors returns, for every parameter, a tensor named
// prefix+param name with the parameter's shape over bufs[i].
func stateTensors(prefix string, params []Param, bufs [][]float32) []Tensor {
	out := make([]Tensor, len(params))
	for i, p := range params {
		out[i] = Tensor{Name: prefix + p.Name, Shape: p.Shape, Data: bufs[i]}
	}
	return out
}

// loadState validates tensors against want (names, shapes and lengths; the
// Data of each want entry is the destination buffer), rejects unexpected
// names starting with prefix and, only when everything checks out, copies
// the data. When withStep is set a valid "optim.step" tensor is required and
// its value returned.
func loadState(tensors []Tensor, prefix string, want []Tensor, withStep bool) (int, error) {
	byName := make(map[string]Tensor, len(tensors))
	for _, t := range tensors {
		if _, dup := byName[t.Name]; dup {
			return 0, fmt.Errorf("optim: state tensor %q appears twice", t.Name)
		}
		byName[t.Name] = t
	}
	expected := make(map[string]bool, len(want)+1)
	step := 0
	if withStep {
		expected[stepTensorName] = true
		var err error
		if step, err = parseStep(byName); err != nil {
			return 0, err
		}
	}
	for _, w := range want {
		expected[w.Name] = true
		t, ok := byName[w.Name]
		if !ok {
			return 0, fmt.Errorf("optim: state tensor %q is missing", w.Name)
		}
		if !slices.Equal(t.Shape, w.Shape) {
			return 0, fmt.Errorf("optim: state tensor %q: shape %v, want %v", w.Name, t.Shape, w.Shape)
		}
		if len(t.Data) != len(w.Data) {
			return 0, fmt.Errorf("optim: state tensor %q: %d elements, want %d", w.Name, len(t.Data), len(w.Data))
		}
	}
	for _, t := range tensors {
		if strings.HasPrefix(t.Name, prefix) && !expected[t.Name] {
			return 0, fmt.Errorf("optim: unexpected state tensor %q (state of a different optimizer or model?)", t.Name)
		}
	}
	for _, w := range want {
		copy(w.Data, byName[w.Name].Data)
	}
	return step, nil
}

// parseStep reads the step count from the "optim.step" tensor.
func parseStep(byName map[string]Tensor) (int, error) {
	t, ok := byName[stepTensorName]
	if !ok {
		return 0, fmt.Errorf("optim: state tensor %q is missing", stepTensorName)
	}
	if len(t.Data) != 1 || !slices.Equal(t.Shape, []int{1}) {
		return 0, fmt.Errorf("optim: state tensor %q: shape %v with %d elements, want [1]", stepTensorName, t.Shape, len(t.Data))
	}
	v := float64(t.Data[0])
	if v < 0 || v > maxStep || v != math.Trunc(v) {
		return 0, fmt.Errorf("optim: state tensor %q: value %g is not a step count in [0, %d]", stepTensorName, v, int64(maxStep))
	}
	return int(v), nil
}

// checkLR rejects negative or non-finite learning rates.
func checkLR(lr float64) error {
	if !(lr >= 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("optim: learning rate %g must be finite and ≥ 0", lr)
	}
	return nil
}

// zeros allocates one zeroed buffer per parameter, on huge pages where
// they are large enough (the optimizer streams through them every step).
func zeros(params []Param) [][]float32 {
	out := make([][]float32, len(params))
	for i, p := range params {
		out[i] = hugepages.Make[float32](len(p.Data))
	}
	return out
}
