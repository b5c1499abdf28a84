package runner

import (
	"fmt"

	"gorgonia.org/gorgonia"
)

// Watch lists, for some nodes of a program, the step after which each holds
// its final value in a run: a data-parallel step starts reducing a
// gradient as soon as the backward pass has computed it.
type Watch struct {
	after [][]int // per step: the watched nodes (indices into the list) final after it
	early []int   // watched input nodes, final before the first step
}

// Watch returns the watch of nodes, every one of them an input or an
// output of p.
func (p *Program) Watch(nodes []*gorgonia.Node) (*Watch, error) {
	w := &Watch{after: make([][]int, len(p.steps))}
	last := make(map[*gorgonia.Node]int, len(p.steps))
	for i, st := range p.steps {
		last[st.node] = i
	}
	for k, n := range nodes {
		if _, ok := p.index[n]; !ok {
			return nil, fmt.Errorf("runner: watched node %q is not part of the program", n.Name())
		}
		i, computed := last[n]
		if !computed {
			w.early = append(w.early, k)
			continue
		}
		w.after[i] = append(w.after[i], k)
	}
	return w, nil
}

// RunWatch executes the program once, as Run does, and calls ready(k) as
// soon as watched node k holds its value for this run, on the calling
// goroutine; an error from ready stops the run. Every watched node is
// reported exactly once per successful run.
func (p *Program) RunWatch(w *Watch, ready func(k int) error) error {
	if len(w.after) != len(p.steps) {
		return fmt.Errorf("runner: the watch belongs to another program")
	}
	if err := p.loadInputs(); err != nil {
		return err
	}
	for _, k := range w.early {
		if err := ready(k); err != nil {
			return err
		}
	}
	for i := range p.steps {
		if err := p.exec(i); err != nil {
			return err
		}
		for _, k := range w.after[i] {
			if err := ready(k); err != nil {
				return err
			}
		}
	}
	return nil
}
