package comm

import (
	"fmt"
	"sync"
)

// NewGroup returns the communicators of a job of n ranks that run as
// goroutines of this process, rank i at index i. Each member is used by one
// goroutine at a time, as each MPI process is; the members' collective calls
// meet in shared memory. Sums are taken in rank order, so results are the
// same on every member and from run to run.
//
// A group lets tests run data-parallel code with several ranks without MPI.
// It checks more than MPI does: a collective whose members disagree on the
// operation, the element type, the length or the root fails on every member
// with an error, as does one that a closed member can never join. A member's
// Abort does not end the process: it writes the message to standard error and
// fails every pending and later operation of every member with an error
// wrapping [ErrAborted].
func NewGroup(n int) ([]Communicator, error) {
	if n < 1 {
		return nil, fmt.Errorf("comm: group of %d ranks", n)
	}
	g := &group{slots: make([]slot, n), closed: make([]bool, n)}
	g.cond.L = &g.mu
	cs := make([]Communicator, n)
	for i := range cs {
		cs[i] = &member{g: g, rank: i}
	}
	return cs, nil
}

// opKind names a collective operation.
type opKind uint8

const (
	opSumF32 opKind = iota + 1
	opSumF64
	opSumI64
	opMaxF64
	opMaxI64
	opBcastF32
	opBcastF64
	opBcastI64
	opBcastBytes
	opBarrier
)

var opNames = [...]string{
	opSumF32: "AllreduceSumFloat32", opSumF64: "AllreduceSumFloat64", opSumI64: "AllreduceSumInt64",
	opMaxF64: "AllreduceMaxFloat64", opMaxI64: "AllreduceMaxInt64",
	opBcastF32: "BroadcastFloat32", opBcastF64: "BroadcastFloat64", opBcastI64: "BroadcastInt64",
	opBcastBytes: "BroadcastBytes", opBarrier: "Barrier",
}

func (k opKind) String() string { return opNames[k] }

// slot is one member's side of the collective in progress.
type slot struct {
	kind opKind
	n    int
	root int
	f32  []float32
	f64  []float64
	i64  []int64
	b    []byte
}

// group is the shared state of the members of a NewGroup.
type group struct {
	mu      sync.Mutex
	cond    sync.Cond
	slots   []slot
	closed  []bool
	arrived int
	gen     uint64 // collectives completed
	err     error  // of the last completed collective
	aborted error

	f32 []float32
	f64 []float64
	i64 []int64
}

// run is member rank's part in a collective described by s.
func (g *group) run(rank int, s slot) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.aborted != nil {
		return g.aborted
	}
	if g.closed[rank] {
		return ErrClosed
	}
	if err := checkCount(s.n); err != nil {
		return err
	}
	g.slots[rank] = s
	g.arrived++
	gen := g.gen
	if g.arrived == len(g.slots) || g.anyClosed() {
		g.complete()
		return g.err
	}
	for g.gen == gen && g.aborted == nil {
		g.cond.Wait()
	}
	if g.gen == gen {
		return g.aborted
	}
	return g.err
}

// anyClosed tells whether a member has closed.
func (g *group) anyClosed() bool {
	for _, c := range g.closed {
		if c {
			return true
		}
	}
	return false
}

// complete finishes the collective in progress, writing every member's
// result, and wakes the members. The caller holds g.mu.
func (g *group) complete() {
	g.err = g.apply()
	for i := range g.slots {
		g.slots[i] = slot{}
	}
	g.arrived = 0
	g.gen++
	g.cond.Broadcast()
}

// apply checks that the members agree and computes the collective.
func (g *group) apply() error {
	for r, c := range g.closed {
		if c {
			return fmt.Errorf("comm: rank %d closed its communicator; %s cannot complete", r, g.firstKind())
		}
	}
	s0 := g.slots[0]
	for r, s := range g.slots[1:] {
		if s.kind != s0.kind || s.n != s0.n || s.root != s0.root {
			return fmt.Errorf("comm: collective mismatch: rank 0 calls %s of %d elements (root %d), rank %d calls %s of %d elements (root %d)",
				s0.kind, s0.n, s0.root, r+1, s.kind, s.n, s.root)
		}
	}
	if s0.kind >= opBcastF32 && s0.kind <= opBcastBytes {
		if err := checkRoot(s0.root, len(g.slots)); err != nil {
			return err
		}
	}
	switch s0.kind {
	case opSumF32:
		g.f32 = grow(g.f32, s0.n)
		copy(g.f32, s0.f32)
		for _, s := range g.slots[1:] {
			for i, v := range s.f32 {
				g.f32[i] += v
			}
		}
		for _, s := range g.slots {
			copy(s.f32, g.f32)
		}
	case opSumF64, opMaxF64:
		g.f64 = grow(g.f64, s0.n)
		copy(g.f64, s0.f64)
		for _, s := range g.slots[1:] {
			for i, v := range s.f64 {
				if s0.kind == opSumF64 {
					g.f64[i] += v
				} else if v > g.f64[i] || v != v {
					g.f64[i] = v
				}
			}
		}
		for _, s := range g.slots {
			copy(s.f64, g.f64)
		}
	case opSumI64, opMaxI64:
		g.i64 = grow(g.i64, s0.n)
		copy(g.i64, s0.i64)
		for _, s := range g.slots[1:] {
			for i, v := range s.i64 {
				if s0.kind == opSumI64 {
					g.i64[i] += v
				} else if v > g.i64[i] {
					g.i64[i] = v
				}
			}
		}
		for _, s := range g.slots {
			copy(s.i64, g.i64)
		}
	case opBcastF32:
		for _, s := range g.slots {
			copy(s.f32, g.slots[s0.root].f32)
		}
	case opBcastF64:
		for _, s := range g.slots {
			copy(s.f64, g.slots[s0.root].f64)
		}
	case opBcastI64:
		for _, s := range g.slots {
			copy(s.i64, g.slots[s0.root].i64)
		}
	case opBcastBytes:
		for _, s := range g.slots {
			copy(s.b, g.slots[s0.root].b)
		}
	}
	return nil
}

// firstKind names the operation of the first member that has arrived.
func (g *group) firstKind() string {
	for _, s := range g.slots {
		if s.kind != 0 {
			return s.kind.String()
		}
	}
	return "the collective"
}

// grow returns s resized to n elements, reallocating only when it is too
// short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// member is one rank of a NewGroup.
type member struct {
	g    *group
	rank int
}

func (m *member) Rank() int { return m.rank }
func (m *member) Size() int { return len(m.g.slots) }

func (m *member) AllreduceSumFloat32(buf []float32) error {
	return m.g.run(m.rank, slot{kind: opSumF32, n: len(buf), f32: buf})
}
func (m *member) AllreduceSumFloat64(buf []float64) error {
	return m.g.run(m.rank, slot{kind: opSumF64, n: len(buf), f64: buf})
}
func (m *member) AllreduceSumInt64(buf []int64) error {
	return m.g.run(m.rank, slot{kind: opSumI64, n: len(buf), i64: buf})
}
func (m *member) AllreduceMaxFloat64(buf []float64) error {
	return m.g.run(m.rank, slot{kind: opMaxF64, n: len(buf), f64: buf})
}
func (m *member) AllreduceMaxInt64(buf []int64) error {
	return m.g.run(m.rank, slot{kind: opMaxI64, n: len(buf), i64: buf})
}
func (m *member) BroadcastFloat32(buf []float32, root int) error {
	return m.g.run(m.rank, slot{kind: opBcastF32, n: len(buf), root: root, f32: buf})
}
func (m *member) BroadcastFloat64(buf []float64, root int) error {
	return m.g.run(m.rank, slot{kind: opBcastF64, n: len(buf), root: root, f64: buf})
}
func (m *member) BroadcastInt64(buf []int64, root int) error {
	return m.g.run(m.rank, slot{kind: opBcastI64, n: len(buf), root: root, i64: buf})
}
func (m *member) BroadcastBytes(buf []byte, root int) error {
	return m.g.run(m.rank, slot{kind: opBcastBytes, n: len(buf), root: root, b: buf})
}
func (m *member) Barrier() error { return m.g.run(m.rank, slot{kind: opBarrier}) }

func (m *member) Abort(code int, msg string) {
	writeAbort(m.rank, msg)
	g := m.g
	g.mu.Lock()
	if g.aborted == nil {
		g.aborted = fmt.Errorf("rank %d aborted with code %d (%s): %w", m.rank, exitCode(code), msg, ErrAborted)
	}
	g.cond.Broadcast()
	g.mu.Unlock()
}

// Close marks the member closed. A collective that other members are waiting
// in, or start later, fails: this member can no longer join it.
func (m *member) Close() error {
	g := m.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed[m.rank] {
		return nil
	}
	g.closed[m.rank] = true
	if g.arrived > 0 {
		g.complete()
	}
	return nil
}

func (m *member) String() string {
	return fmt.Sprintf("comm.Group member (rank %d of %d)", m.rank, len(m.g.slots))
}
