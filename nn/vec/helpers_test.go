package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// eps32 is the float32 unit roundoff, 2⁻²⁴.
const eps32 = 1.0 / (1 << 24)

// testLengths are the lengths every kernel is checked at: all of 0…70 (each
// tail of both vector widths, with and without whole unrolled blocks) and
// some long ones.
var testLengths = func() []int {
	var l []int
	for n := 0; n <= 70; n++ {
		l = append(l, n)
	}
	return append(l, 127, 128, 129, 1000, 4099, 65541)
}()

// forEachLevel runs f once per kernel set this CPU supports, with that set
// forced, as subtests named after it.
func forEachLevel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, l := range availableLevels() {
		t.Run(levelNames[l], func(t *testing.T) {
			defer setLevel(l)()
			f(t)
		})
	}
}

// setLevel forces the kernel set l and returns a function restoring the
// previous one.
func setLevel(l int) (restore func()) {
	old := level
	level = l
	return func() { level = old }
}

// sentinel fills the guard cells around a test slice.
var sentinel = math.Float32frombits(0x7fa5a5a5) // a NaN no kernel produces

// guarded is a slice of n float32 values starting off elements into a
// buffer, with guard cells on both sides to catch stray writes.
type guarded struct {
	buf    []float32
	off, n int
}

func newGuarded(n, off int) *guarded {
	g := &guarded{buf: make([]float32, off+n+19), off: off, n: n}
	for i := range g.buf {
		g.buf[i] = sentinel
	}
	return g
}

// newGuardedPastBoundary is newGuarded with the slice starting shift
// elements past a 64-byte boundary.
func newGuardedPastBoundary(n, shift int) *guarded {
	g := newGuarded(n, 16+shift)
	skip := int((64 - uintptr(unsafe.Pointer(&g.buf[0]))%64) % 64 / 4)
	g.off = skip + shift
	return g
}

// s returns the slice under test, with its capacity cut to its length.
func (g *guarded) s() []float32 { return g.buf[g.off : g.off+g.n : g.off+g.n] }

// check fails t if a guard cell changed.
func (g *guarded) check(t *testing.T, what string) {
	t.Helper()
	for i, v := range g.buf {
		if (i < g.off || i >= g.off+g.n) && math.Float32bits(v) != math.Float32bits(sentinel) {
			t.Fatalf("%s: wrote %g outside the slice (buffer index %d, slice [%d, %d))", what, v, i, g.off, g.off+g.n)
		}
	}
}

// randGuarded returns a guarded slice of n values uniform in [lo, hi),
// starting off elements into its buffer.
func randGuarded(rng *rand.Rand, n, off int, lo, hi float64) *guarded {
	g := newGuarded(n, off)
	s := g.s()
	for i := range s {
		s[i] = float32(lo + (hi-lo)*rng.Float64())
	}
	return g
}

// sumTol bounds the rounding error of a float32 sum of n terms whose
// magnitudes add up to mag, for any order that splits it over at least 4
// running sums (each term's own rounding included).
func sumTol(n int, mag float64) float64 {
	return float64(n/4+8) * eps32 * mag
}

// relErr returns |got − want| / |want| (0 when both are 0).
func relErr(got, want float64) float64 {
	if got == want {
		return 0
	}
	return math.Abs(got-want) / math.Abs(want)
}

// sameNaN reports whether got and want are both NaN or both not.
func sameNaN(got, want float64) bool { return math.IsNaN(got) == math.IsNaN(want) }

func name(n, off int) string { return fmt.Sprintf("n=%d off=%d", n, off) }

// specials are edge inputs mixed into the element-wise tests.
var specials = []float32{
	0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
	1e30, -1e30, math.MaxFloat32, -math.MaxFloat32, 1e-40, -1e-40, 88.72283, 88.7229, 88.5, -87.33, -87.34, -87.3366, -100, 100, 10, -10, 13.2, -13.2, 20, -20,
}
