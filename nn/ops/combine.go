package ops

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Combine returns Σ weights[i]·terms[i] for scalar terms of one dtype, such
// as (1−α)·CE + α·KD. Each term's gradient is weights[i] times the incoming
// one.
func Combine(weights []float64, terms ...*gorgonia.Node) (*gorgonia.Node, error) {
	if len(terms) == 0 || len(weights) != len(terms) {
		return nil, fmt.Errorf("Combine: %d weights for %d terms", len(weights), len(terms))
	}
	for i, t := range terms {
		if t == nil || !t.IsScalar() {
			return nil, fmt.Errorf("Combine: term %d is not a scalar node", i)
		}
		if t.Dtype() != terms[0].Dtype() {
			return nil, fmt.Errorf("Combine: term %d has dtype %v, want %v", i, t.Dtype(), terms[0].Dtype())
		}
		if math.IsNaN(weights[i]) || math.IsInf(weights[i], 0) {
			return nil, fmt.Errorf("Combine: weight %d is %v", i, weights[i])
		}
	}
	ws := append([]float64(nil), weights...)
	op := &combineOp{weights: ws}
	op.base = base{name: "Combine", arity: len(ws), params: func(h hash.Hash) { fmt.Fprint(h, ws) }}
	return gorgonia.ApplyOp(op, terms...)
}

// combineOp is Σ weights[i]·in[i] over scalars; with len(weights) == 1 it
// is also the backward of each term.
type combineOp struct {
	base
	weights []float64
	out     scalarOut
}

func (op *combineOp) Type() hm.Type { return fnType(0, make([]int, len(op.weights))...) }

func (op *combineOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}

func (op *combineOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	dt, err := checkDtypes(op.name, in...)
	if err != nil {
		return nil, err
	}
	s := 0.0
	for i, v := range in {
		s += op.weights[i] * scalarOf(v)
	}
	return op.out.set(dt, s), nil
}

// UsePreallocDo computes the sum; scalars need no buffer.
func (op *combineOp) UsePreallocDo(_ gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.Do(in...)
}

func (op *combineOp) DiffWRT(inputs int) []bool {
	d := make([]bool, inputs)
	for i := range d {
		d[i] = true
	}
	return d
}

// SymDiff gives term i the gradient weights[i]·grad: grad itself for a
// weight of 1, a one-term Combine otherwise.
func (op *combineOp) SymDiff(inputs gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	grads := make(gorgonia.Nodes, len(inputs))
	for i, w := range op.weights {
		if w == 1 {
			grads[i] = grad
			continue
		}
		g, err := Combine([]float64{w}, grad)
		if err != nil {
			return nil, err
		}
		grads[i] = g
	}
	return grads, nil
}
