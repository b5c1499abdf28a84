package runner

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"gorgonia.org/gorgonia"
)

// OpTimes is the wall time each op of a program took, summed over the
// runs made while the program was timing its ops (Program.TimeOps).
type OpTimes struct {
	prog  *Program
	spent []time.Duration // per step of prog
	runs  int
}

// OpTime is what the ops of one kind with one output shape took over the
// runs timed: how many ran and their wall time, summed.
type OpTime struct {
	Op    string // the op as it names itself, e.g. "LinearGELU"
	Shape string // its output's shape, e.g. "(64, 65, 768)"
	Calls int
	Spent time.Duration
}

// TimeOps makes every later run of p time each of its ops, two reads of
// the clock an op, until p.StopTiming, and returns the times' record.
func (p *Program) TimeOps() *OpTimes {
	t := &OpTimes{prog: p, spent: make([]time.Duration, len(p.steps))}
	p.times = t
	return t
}

// StopTiming ends the timing that TimeOps started.
func (p *Program) StopTiming() { p.times = nil }

// add records d for step i; the first step counts a run.
func (t *OpTimes) add(i int, d time.Duration) {
	t.spent[i] += d
	if i == 0 {
		t.runs++
	}
}

// Runs is the number of runs timed.
func (t *OpTimes) Runs() int { return t.runs }

// ByOp returns the times of the ops, those of one kind and output shape
// together, the longest first.
func (t *OpTimes) ByOp() []OpTime {
	var out []OpTime
	at := make(map[[2]string]int)
	for i := range t.prog.steps {
		st := &t.prog.steps[i]
		key := [2]string{opName(st), fmt.Sprint(st.node.Shape())}
		j, ok := at[key]
		if !ok {
			j = len(out)
			at[key] = j
			out = append(out, OpTime{Op: key[0], Shape: key[1]})
		}
		out[j].Calls += t.runs
		out[j].Spent += t.spent[i]
	}
	slices.SortStableFunc(out, func(a, b OpTime) int { return cmp.Compare(b.Spent, a.Spent) })
	return out
}

// opName is the name of the op that st runs: the substitute's where
// Substitute gave it one.
func opName(st *step) string {
	if op, ok := st.prealloc.(gorgonia.Op); ok {
		return op.String()
	}
	return st.op.String()
}
