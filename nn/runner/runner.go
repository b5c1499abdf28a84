// Package runner executes a Gorgonia expression graph, forward and backward
// nodes alike, with buffers planned once and reused on every run.
//
// Gorgonia builds the graph and its symbolic gradients (gorgonia.Grad); a
// Program then walks the nodes needed for the requested outputs in
// topological order. Every op node gets an output buffer at compile time;
// buffers are shared between nodes whose lifetimes do not overlap, so a
// training step allocates nothing once compiled (for ops that implement
// gorgonia.UsePreallocDoer without allocating, as all of vit-train's fused
// ops do; Substitute swaps in such an op where Gorgonia's would allocate).
//
// Ops must not keep references to their input values between runs: what a
// backward node needs from the forward pass is either a graph input of that
// node or state the op owns.
package runner

import (
	"fmt"
	"slices"
	"time"
	"unsafe"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vit-train/vit-train/internal/hugepages"
)

// step is one op node to execute.
type step struct {
	node     *gorgonia.Node
	op       gorgonia.Op
	prealloc gorgonia.UsePreallocDoer // nil when the op cannot write into a buffer
	merged   bool                     // prealloc computes node, a sum, with one term's op (Merge)
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
	bytes  int64    // bytes of the planned buffers
	times  *OpTimes // where each op's time goes, when timing (TimeOps)
}

type inputSlot struct {
	node *gorgonia.Node
	slot int
}

// Compile plans the computation of outputs (and everything they depend on) in g.
// Input nodes (parameters, data, constants) are read with Node.Value at each
// Run, so values bound with gorgonia.Let, or tensors updated in place, are seen.
func Compile(g *gorgonia.ExprGraph, outputs ...*gorgonia.Node) (*Program, error) {
	return CompileRecompute(g, nil, outputs...)
}

// Segment is a part of the forward pass that activation checkpointing
// recomputes: the op nodes of one encoder block, say, other than Output,
// the block's result, which is kept.
type Segment struct {
	Nodes  []*gorgonia.Node
	Output *gorgonia.Node
}

// CompileRecompute is Compile with activation checkpointing: the values of
// each segment's nodes are dropped once the segment's forward (up to its
// Output) has read them, and computed again, from the segment's inputs,
// just before the first later node that reads them (the segment's
// backward). Only the segments' inputs and outputs stay alive between the
// forward and the backward pass, at the cost of running each segment's
// forward twice.
//
// A segment's ops must give the same values when run twice in one Run (the
// masks of ops.Randomness do); op-owned state is overwritten with the same
// values. Outputs of the program and input nodes are never recomputed.
func CompileRecompute(g *gorgonia.ExprGraph, segments []Segment, outputs ...*gorgonia.Node) (*Program, error) {
	return CompileWith(g, Options{Segments: segments}, outputs...)
}

// Options are what CompileWith does besides planning the outputs.
type Options struct {
	// Segments are recomputed in the backward pass (see CompileRecompute).
	Segments []Segment
	// Merge, where set, folds sums into the ops that make one of their
	// terms (see Merge).
	Merge Merge
}

// CompileWith is Compile with activation checkpointing of opts.Segments
// and the sums opts.Merge folds.
func CompileWith(g *gorgonia.ExprGraph, opts Options, outputs ...*gorgonia.Node) (*Program, error) {
	execNodes, p, err := plan(g, outputs)
	if err != nil {
		return nil, err
	}
	isOutput := make(map[*gorgonia.Node]bool, len(outputs))
	for _, o := range outputs {
		isOutput[o] = true
	}
	entries := p.resolve(g, schedule(g, execNodes, opts.Segments, isOutput))
	if opts.Merge != nil {
		entries = mergeSums(g, entries, isOutput, opts.Merge)
	}
	p.allocate(entries, lastUses(entries), isOutput)
	return p, nil
}

// Merge gives, for an op node sum whose value is in[0] + in[1], the sum
// of its two inputs, an op that computes that value in one step from the
// inputs of in[term]'s node followed by in[1−term]: in[term]'s own op
// adding the other term to its output as it stores it. It returns false
// where there is none.
type Merge func(sum *gorgonia.Node, in []*gorgonia.Node, term int) (op gorgonia.UsePreallocDoer, ok bool)

// OrderingInputs is an op that reads some of its inputs only to run after
// the nodes that make them, never their values.
type OrderingInputs interface {
	// OrdersOnly reports whether input i is such an input.
	OrdersOnly(i int) bool
}

// Native gives, for a node and its inputs (in argument order), an op to run
// in place of the node's own, or false to keep that (see ops.NativeOp).
type Native func(n *gorgonia.Node, inputs []*gorgonia.Node) (gorgonia.UsePreallocDoer, bool)

// Substitute makes every step with a planned buffer, other than the sums
// merged into a term's op (Merge), run the op native gives for its node
// instead of the node's own, and returns how many steps it changed. The
// graph is left as it is: the node keeps its op for gorgonia.Grad and for
// error messages.
func (p *Program) Substitute(g *gorgonia.ExprGraph, native Native) int {
	changed := 0
	for i := range p.steps {
		st := &p.steps[i]
		if st.prealloc == nil || st.merged {
			continue
		}
		if op, ok := native(st.node, Inputs(g, st.node)); ok {
			st.prealloc = op
			changed++
		}
	}
	return changed
}

// entry is one scheduled node with the slots it writes and reads.
type entry struct {
	node   *gorgonia.Node
	out    int
	inputs []int
	// merged is the op that computes node, a sum, from the inputs of one
	// term's node and the other term (see Merge); nil: node's own op.
	merged gorgonia.UsePreallocDoer
}

// resolve gives recomputed values their own slots and resolves every
// scheduled node's inputs to the slot current at that point of the
// schedule.
func (p *Program) resolve(g *gorgonia.ExprGraph, sched []scheduled) []entry {
	current := make(map[*gorgonia.Node]int, len(p.index))
	for n, i := range p.index {
		current[n] = i
	}
	entries := make([]entry, len(sched))
	for j, e := range sched {
		out := p.index[e.node]
		if e.recompute {
			out = len(p.slots)
			p.slots = append(p.slots, nil)
		}
		ent := entry{node: e.node, out: out}
		for _, c := range Inputs(g, e.node) {
			ent.inputs = append(ent.inputs, current[c])
		}
		current[e.node] = out
		entries[j] = ent
	}
	return entries
}

// lastUses maps each slot that entries read to the last entry that reads it.
func lastUses(entries []entry) map[int]int {
	lastUse := make(map[int]int)
	for j, ent := range entries {
		for _, in := range ent.inputs {
			lastUse[in] = j
		}
	}
	return lastUse
}

// mergeSums folds each sum that merge allows into the entry that makes
// its later term, which then computes the sum into the sum's slot; the
// sum's own entry goes, and readers of the term that only order
// themselves after it (OrderingInputs) read the sum instead. The term
// qualifies when its entry is not an output's nor a merged sum's, and
// its value is read by the sum alone. Its slot is then never written.
func mergeSums(g *gorgonia.ExprGraph, entries []entry, isOutput map[*gorgonia.Node]bool, merge Merge) []entry {
	maker := make(map[int]int)        // slot → the entry that writes it
	readers := make(map[int][][2]int) // slot → (entry, input) pairs reading it
	for j, ent := range entries {
		maker[ent.out] = j
		for k, in := range ent.inputs {
			readers[in] = append(readers[in], [2]int{j, k})
		}
	}
	madeAt := func(slot int) int { // -1 for a value no entry makes
		if i, ok := maker[slot]; ok {
			return i
		}
		return -1
	}
	dropped := make(map[int]bool)
	for j, sum := range entries {
		if len(sum.inputs) != 2 || sum.inputs[0] == sum.inputs[1] {
			continue
		}
		term := 0
		if madeAt(sum.inputs[1]) > madeAt(sum.inputs[0]) {
			term = 1
		}
		a, b := sum.inputs[term], sum.inputs[1-term]
		i := madeAt(a)
		if i < 0 || isOutput[entries[i].node] || entries[i].merged != nil {
			continue
		}
		op, ok := merge(sum.node, Inputs(g, sum.node), term)
		if !ok {
			continue
		}
		others, onlyOrdering := orderingReaders(entries, readers[a], j)
		if !onlyOrdering {
			continue
		}
		entries[i] = entry{node: sum.node, out: sum.out, inputs: append(slices.Clone(entries[i].inputs), b), merged: op}
		for _, r := range others {
			entries[r[0]].inputs[r[1]] = sum.out
		}
		readers[sum.out] = append(readers[sum.out], others...)
		readers[b] = append(readers[b], [2]int{i, len(entries[i].inputs) - 1})
		maker[sum.out] = i
		delete(maker, a)
		dropped[j] = true
	}
	kept := entries[:0]
	for j, ent := range entries {
		if !dropped[j] {
			kept = append(kept, ent)
		}
	}
	return kept
}

// orderingReaders returns the reads of a value other than entry sum's,
// and whether each of them only orders its entry after the value
// (OrderingInputs).
func orderingReaders(entries []entry, reads [][2]int, sum int) (others [][2]int, onlyOrdering bool) {
	for _, r := range reads {
		if r[0] == sum {
			continue
		}
		o, ok := entries[r[0]].node.Op().(OrderingInputs)
		if !ok || !o.OrdersOnly(r[1]) {
			return nil, false
		}
		others = append(others, r)
	}
	return others, true
}

// allocate turns the entries into steps and plans their buffers: a buffer
// freed by its last reader is handed to the next node of the same dtype
// and size; outputs keep theirs. The buffers of each dtype are then cut
// from one block of memory (makeBackings).
func (p *Program) allocate(entries []entry, lastUse map[int]int, isOutput map[*gorgonia.Node]bool) {
	var buffers []bufferKey
	free := make(map[bufferKey][]int) // indices into buffers
	bufferOf := make(map[int]int)     // slot → index into buffers
	released := make(map[int]bool)
	freeable := make(map[int]bufferKey)
	for j, ent := range entries {
		n := ent.node
		st := step{node: n, op: n.Op(), out: ent.out, inputs: ent.inputs, args: make([]gorgonia.Value, len(ent.inputs)), merged: ent.merged != nil}
		pd, ok := n.Op().(gorgonia.UsePreallocDoer)
		if st.merged {
			pd, ok = ent.merged, true
		}
		if ok && !n.IsScalar() {
			st.prealloc = pd
			k := bufferKey{n.Dtype(), n.Shape().TotalSize()}
			if l := free[k]; len(l) > 0 {
				bufferOf[st.out], free[k] = l[len(l)-1], l[:len(l)-1]
			} else {
				bufferOf[st.out] = len(buffers)
				buffers = append(buffers, k)
				p.bytes += int64(k.size) * int64(k.dt.Size())
			}
			if !isOutput[n] {
				freeable[st.out] = k
			}
		}
		p.steps = append(p.steps, st)
		// Release the buffers of values read for the last time here.
		for _, in := range ent.inputs {
			k, ok := freeable[in]
			if !ok || lastUse[in] != j || released[in] {
				continue
			}
			released[in] = true
			free[k] = append(free[k], bufferOf[in])
		}
	}
	backings := makeBackings(buffers)
	for _, st := range p.steps {
		if st.prealloc != nil {
			p.slots[st.out] = tensor.New(tensor.WithShape(st.node.Shape()...), tensor.WithBacking(backings[bufferOf[st.out]]))
		}
	}
}

// bufferKey is what a buffer can be reused for: values of one dtype and
// size.
type bufferKey struct {
	dt   tensor.Dtype
	size int
}

// plan returns the op nodes the outputs need, leaves first, and a Program
// with one slot per needed node and its input slots recorded.
func plan(g *gorgonia.ExprGraph, outputs []*gorgonia.Node) ([]*gorgonia.Node, *Program, error) {
	sorted, err := gorgonia.Sort(g)
	if err != nil {
		return nil, nil, fmt.Errorf("runner: sorting graph: %w", err)
	}
	needed := make(map[*gorgonia.Node]bool)
	var mark func(n *gorgonia.Node)
	mark = func(n *gorgonia.Node) {
		if needed[n] {
			return
		}
		needed[n] = true
		for _, c := range Inputs(g, n) {
			mark(c)
		}
	}
	for _, o := range outputs {
		if o == nil {
			return nil, nil, fmt.Errorf("runner: nil output node")
		}
		mark(o)
	}
	p := &Program{index: make(map[*gorgonia.Node]int)}
	var execNodes []*gorgonia.Node
	// gorgonia.Sort puts roots first; execution needs leaves first.
	for i := len(sorted) - 1; i >= 0; i-- {
		n := sorted[i]
		if !needed[n] {
			continue
		}
		p.index[n] = len(p.slots)
		p.slots = append(p.slots, nil)
		if isLeaf(n) {
			p.inputs = append(p.inputs, inputSlot{node: n, slot: p.index[n]})
			continue
		}
		execNodes = append(execNodes, n)
	}
	return execNodes, p, nil
}

// scheduled is one op node to run; recompute marks a segment's second run.
type scheduled struct {
	node      *gorgonia.Node
	recompute bool
}

// schedule returns execNodes in order with, for each segment, a second run
// of its nodes inserted before the first node outside the segment that
// reads one of them after the segment's forward has finished.
func schedule(g *gorgonia.ExprGraph, execNodes []*gorgonia.Node, segments []Segment, isOutput map[*gorgonia.Node]bool) []scheduled {
	pos := make(map[*gorgonia.Node]int, len(execNodes))
	for i, n := range execNodes {
		pos[n] = i
	}
	insertBefore := make(map[int][]*gorgonia.Node)
	for _, seg := range segments {
		in := make(map[*gorgonia.Node]bool, len(seg.Nodes))
		end := -1
		for _, n := range seg.Nodes {
			if i, ok := pos[n]; ok && !isOutput[n] && n != seg.Output {
				in[n] = true
				end = max(end, i)
			}
		}
		if i, ok := pos[seg.Output]; ok {
			end = max(end, i)
		}
		first := -1
		for _, r := range execNodes[end+1:] {
			if in[r] || r == seg.Output {
				continue
			}
			for _, c := range Inputs(g, r) {
				if in[c] {
					first = pos[r]
					break
				}
			}
			if first >= 0 {
				break
			}
		}
		if first < 0 {
			continue
		}
		for _, n := range execNodes[:end+1] {
			if in[n] {
				insertBefore[first] = append(insertBefore[first], n)
			}
		}
	}
	var sched []scheduled
	for i, n := range execNodes {
		for _, r := range insertBefore[i] {
			sched = append(sched, scheduled{node: r, recompute: true})
		}
		sched = append(sched, scheduled{node: n})
	}
	return sched
}

// Inputs returns n's inputs, its children, in argument order.
func Inputs(g *gorgonia.ExprGraph, n *gorgonia.Node) []*gorgonia.Node {
	it := g.From(n.ID())
	var cs []*gorgonia.Node
	for it.Next() {
		cs = append(cs, it.Node().(*gorgonia.Node))
	}
	return cs
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

// makeBackings returns a backing slice for each of buffers. The float32
// and float64 buffers are cut, each 64-byte aligned, from one block per
// dtype on huge pages (hugepages.Make): small buffers share huge pages
// rather than each lying on base pages of its own.
func makeBackings(buffers []bufferKey) []any {
	out := make([]any, len(buffers))
	f32 := carve[float32](buffers, tensor.Float32)
	f64 := carve[float64](buffers, tensor.Float64)
	for i, k := range buffers {
		switch k.dt {
		case tensor.Float32:
			out[i] = f32[i]
		case tensor.Float64:
			out[i] = f64[i]
		case tensor.Int:
			out[i] = make([]int, k.size)
		default:
			panic(fmt.Sprintf("runner: unsupported dtype %v", k.dt))
		}
	}
	return out
}

// carve returns, for each buffer of dtype dt, its slice of one block of
// memory (nil for the others): consecutive, each starting on a 64-byte
// boundary and capped at its size.
func carve[T float32 | float64](buffers []bufferKey, dt tensor.Dtype) [][]T {
	line := 64 / int(unsafe.Sizeof(T(0)))
	total := 0
	for _, k := range buffers {
		if k.dt == dt {
			total += (k.size + line - 1) / line * line
		}
	}
	if total == 0 {
		return make([][]T, len(buffers))
	}
	block := hugepages.Make[T](total)
	off := 0
	out := make([][]T, len(buffers))
	for i, k := range buffers {
		if k.dt == dt {
			out[i] = block[off : off+k.size : off+k.size]
			off += (k.size + line - 1) / line * line
		}
	}
	return out
}

// Run executes the program once.
func (p *Program) Run() error {
	if err := p.loadInputs(); err != nil {
		return err
	}
	for i := range p.steps {
		if err := p.exec(i); err != nil {
			return err
		}
	}
	return nil
}

// loadInputs reads the input nodes' current values into their slots.
func (p *Program) loadInputs() error {
	for _, in := range p.inputs {
		v := in.node.Value()
		if v == nil {
			return fmt.Errorf("runner: input node %q has no value", in.node.Name())
		}
		p.slots[in.slot] = v
	}
	return nil
}

// exec executes step i.
func (p *Program) exec(i int) error {
	st := &p.steps[i]
	for j, s := range st.inputs {
		st.args[j] = p.slots[s]
	}
	var (
		v     gorgonia.Value
		err   error
		start time.Time
	)
	if p.times != nil {
		start = time.Now()
	}
	if st.prealloc != nil {
		v, err = st.prealloc.UsePreallocDo(p.slots[st.out], st.args...)
	} else {
		v, err = st.op.Do(st.args...)
	}
	if p.times != nil {
		p.times.add(i, time.Since(start))
	}
	if err != nil {
		return fmt.Errorf("runner: node %v (%v): %w", st.node.Name(), st.op, err)
	}
	p.slots[st.out] = v
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

// BufferBytes is the size of the buffers the program planned for its op
// nodes' values: the activation memory of a training step, without the
// parameters, inputs and op-owned state.
func (p *Program) BufferBytes() int64 { return p.bytes }

// Steps is the number of op nodes the program executes per run.
func (p *Program) Steps() int { return len(p.steps) }
