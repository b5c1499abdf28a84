// Package runner executes a Gorgonia expression graph, forward and backward
// nodes alike, with buffers planned once and reused on every run.
//
// Gorgonia builds the graph and its symbolic gradients (gorgonia.Grad); a
// Program then walks the nodes needed for the requested outputs in
// topological order. Every op node gets an output buffer at compile time;
// buffers are shared between nodes whose lifetimes do not overlap, so a
// training step allocates nothing once compiled (for ops that implement
// gorgonia.UsePreallocDoer, as all of vit-train's fused ops do).
//
// Ops must not keep references to their input values between runs: what a
// backward node needs from the forward pass is either a graph input of that
// node or state the op owns.
package runner

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// step is one op node to execute.
type step struct {
	node     *gorgonia.Node
	op       gorgonia.Op
	prealloc gorgonia.UsePreallocDoer // nil when the op cannot write into a buffer
	inputs   []int                    // value slots of the children
	out      int                      // value slot of the node
	args     []gorgonia.Value         // reused argument slice
}

// Program is a compiled plan for computing some outputs of a graph.
type Program struct {
	steps  []step
	slots  []gorgonia.Value // current value of each slot
	inputs []inputSlot      // slots read from input nodes at the start of a run
	index  map[*gorgonia.Node]int
}

type inputSlot struct {
	node *gorgonia.Node
	slot int
}

// Compile plans the computation of outputs (and everything they depend on) in g.
// Input nodes (parameters, data, constants) are read with Node.Value at each
// Run, so values bound with gorgonia.Let, or tensors updated in place, are seen.
func Compile(g *gorgonia.ExprGraph, outputs ...*gorgonia.Node) (*Program, error) {
	sorted, err := gorgonia.Sort(g)
	if err != nil {
		return nil, fmt.Errorf("runner: sorting graph: %w", err)
	}
	// gorgonia.Sort puts roots first; execution needs leaves first.
	order := make([]*gorgonia.Node, len(sorted))
	for i, n := range sorted {
		order[len(sorted)-1-i] = n
	}

	children := func(n *gorgonia.Node) []*gorgonia.Node {
		it := g.From(n.ID())
		var cs []*gorgonia.Node
		for it.Next() {
			cs = append(cs, it.Node().(*gorgonia.Node))
		}
		return cs
	}

	// Mark what the outputs need.
	needed := make(map[*gorgonia.Node]bool)
	var mark func(n *gorgonia.Node)
	mark = func(n *gorgonia.Node) {
		if needed[n] {
			return
		}
		needed[n] = true
		for _, c := range children(n) {
			mark(c)
		}
	}
	for _, o := range outputs {
		if o == nil {
			return nil, fmt.Errorf("runner: nil output node")
		}
		mark(o)
	}

	p := &Program{index: make(map[*gorgonia.Node]int)}
	isOutput := make(map[*gorgonia.Node]bool, len(outputs))
	for _, o := range outputs {
		isOutput[o] = true
	}

	// Assign slots and record, for every node, the last step that reads it.
	lastUse := make(map[*gorgonia.Node]int)
	var execNodes []*gorgonia.Node
	for _, n := range order {
		if !needed[n] {
			continue
		}
		p.index[n] = len(p.slots)
		p.slots = append(p.slots, nil)
		if n.Op() == nil || isLeaf(n) {
			p.inputs = append(p.inputs, inputSlot{node: n, slot: p.index[n]})
			continue
		}
		for _, c := range children(n) {
			lastUse[c] = len(execNodes)
		}
		execNodes = append(execNodes, n)
	}

	// Plan buffers: a buffer freed by its last reader is handed to the next
	// node of the same dtype and size.
	type key struct {
		dt   tensor.Dtype
		size int
	}
	free := make(map[key][]any)
	for i, n := range execNodes {
		cs := children(n)
		st := step{node: n, op: n.Op(), out: p.index[n], args: make([]gorgonia.Value, len(cs))}
		for _, c := range cs {
			st.inputs = append(st.inputs, p.index[c])
		}
		if pd, ok := n.Op().(gorgonia.UsePreallocDoer); ok && !n.IsScalar() {
			st.prealloc = pd
			k := key{n.Dtype(), n.Shape().TotalSize()}
			var backing any
			if l := free[k]; len(l) > 0 {
				backing, free[k] = l[len(l)-1], l[:len(l)-1]
			} else {
				backing = makeBacking(k.dt, k.size)
			}
			p.slots[st.out] = tensor.New(tensor.WithShape(n.Shape()...), tensor.WithBacking(backing))
		}
		p.steps = append(p.steps, st)
		// Release the buffers of children read for the last time here.
		for _, c := range cs {
			if lastUse[c] != i || isOutput[c] || c.Op() == nil || isLeaf(c) || c.IsScalar() {
				continue
			}
			if _, ok := c.Op().(gorgonia.UsePreallocDoer); !ok {
				continue
			}
			if d, ok := p.slots[p.index[c]].(*tensor.Dense); ok {
				k := key{c.Dtype(), c.Shape().TotalSize()}
				free[k] = append(free[k], d.Data())
			}
		}
	}
	return p, nil
}

// isLeaf reports whether n's value is fixed at graph-building time or bound
// from outside (inputs and constants).
func isLeaf(n *gorgonia.Node) bool {
	return n.IsVar() || n.Op() == nil || isConstant(n)
}

func isConstant(n *gorgonia.Node) bool {
	_, ok := n.Op().(interface{ Value() gorgonia.Value })
	return ok && n.Op().Arity() == 0
}

func makeBacking(dt tensor.Dtype, size int) any {
	switch dt {
	case tensor.Float32:
		return make([]float32, size)
	case tensor.Float64:
		return make([]float64, size)
	case tensor.Int:
		return make([]int, size)
	}
	panic(fmt.Sprintf("runner: unsupported dtype %v", dt))
}

// Run executes the program once.
func (p *Program) Run() error {
	for _, in := range p.inputs {
		v := in.node.Value()
		if v == nil {
			return fmt.Errorf("runner: input node %q has no value", in.node.Name())
		}
		p.slots[in.slot] = v
	}
	for i := range p.steps {
		st := &p.steps[i]
		for j, s := range st.inputs {
			st.args[j] = p.slots[s]
		}
		var (
			v   gorgonia.Value
			err error
		)
		if st.prealloc != nil {
			v, err = st.prealloc.UsePreallocDo(p.slots[st.out], st.args...)
		} else {
			v, err = st.op.Do(st.args...)
		}
		if err != nil {
			return fmt.Errorf("runner: node %v (%v): %w", st.node.Name(), st.op, err)
		}
		p.slots[st.out] = v
	}
	return nil
}

// Value returns n's value after the last Run, or nil when n is not part of the program.
func (p *Program) Value(n *gorgonia.Node) gorgonia.Value {
	i, ok := p.index[n]
	if !ok {
		return nil
	}
	return p.slots[i]
}

// Steps is the number of op nodes the program executes per run.
func (p *Program) Steps() int { return len(p.steps) }
