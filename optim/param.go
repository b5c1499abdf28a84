package optim

import (
	"fmt"
	"math"
)

// Param is one trainable tensor. Data is the weight buffer the optimizer
// updates in place; its gradient comes to Step, Clip and Add separately,
// aligned with the parameters. Shape is the tensor's shape, e.g.
// (D_out, D_in) for a linear weight or (D,) for a bias, and must multiply
// out to len(Data).
type Param struct {
	Name  string
	Shape []int
	Data  []float32
}

// Tensor is a named float32 tensor of the given shape, the unit in which
// optimizer and EMA state is exported and imported.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

// numElements returns the product of shape, or an error when a dimension
// is negative or the product overflows.
func numElements(shape []int) (int, error) {
	n := 1
	for i, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("dimension %d is %d", i, d)
		}
		if d != 0 && n > math.MaxInt/d {
			return 0, fmt.Errorf("shape %v overflows int", shape)
		}
		n *= d
	}
	return n, nil
}

// checkParams verifies that names are non-empty and unique and that each
// shape matches its data length.
func checkParams(params []Param) error {
	seen := make(map[string]int, len(params))
	for i, p := range params {
		if p.Name == "" {
			return fmt.Errorf("optim: param %d: empty name", i)
		}
		if j, dup := seen[p.Name]; dup {
			return fmt.Errorf("optim: param %d %q: name already used by param %d", i, p.Name, j)
		}
		seen[p.Name] = i
		n, err := numElements(p.Shape)
		if err != nil {
			return fmt.Errorf("optim: param %q: shape: %v", p.Name, err)
		}
		if n != len(p.Data) {
			return fmt.Errorf("optim: param %q: shape %v has %d elements but len(Data) is %d", p.Name, p.Shape, n, len(p.Data))
		}
	}
	return nil
}

// checkGrads verifies that grads is aligned with params.
func checkGrads(params []Param, grads [][]float32) error {
	if len(grads) != len(params) {
		return fmt.Errorf("optim: got %d gradients for %d params", len(grads), len(params))
	}
	for i, g := range grads {
		if len(g) != len(params[i].Data) {
			return fmt.Errorf("optim: param %q: gradient has %d elements, want %d", params[i].Name, len(g), len(params[i].Data))
		}
	}
	return nil
}

// sizes returns len(Data) of every parameter.
func sizes(params []Param) []int {
	out := make([]int, len(params))
	for i, p := range params {
		out[i] = len(p.Data)
	}
	return out
}

// cloneParams copies the parameter list (not the buffers) so later changes
// to the caller's slice do not affect the optimizer.
func cloneParams(params []Param) []Param {
	out := make([]Param, len(params))
	copy(out, params)
	return out
}
