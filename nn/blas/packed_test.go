//go:build !openblas

package blas

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"
)

// packedShapes cover partial row and column tiles, several column blocks,
// K blocks of both kinds (all columns in one block, and blocks of kcMax
// steps that end part-way) and products too small to split.
var packedShapes = [][3]int{{1, 1, 1}, {13, 33, 7}, {37, 45, 29}, {130, 97, 200}, {301, 259, 401}, {64, 1100, 300}, {40, 70, 1700}, {29, 1500, 97}}

// TestGemmPacked checks GemmPacked against the float64 product for every
// kernel and for gonum's products, transposes, scalars, with and without
// a bias.
func TestGemmPacked(t *testing.T) {
	run := func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 22))
		for _, sh := range packedShapes {
			for tr := range 4 {
				for _, s := range [][2]float32{{1, 0}, {-2, 0.25}, {0.5, 1}} {
					for _, bias := range []bool{false, true} {
						gemmCase{tA: tr&1 != 0, tB: tr&2 != 0, m: sh[0], n: sh[1], k: sh[2], alpha: s[0], beta: s[1], pad: 2, nanC: s[1] == 0, bias: bias, packed: true}.check(t, rng)
					}
				}
			}
		}
		gemmCase{m: 5, n: 40, k: 0, alpha: 1, beta: 0.5, pad: 1, bias: true, packed: true}.check(t, rng)
		gemmCase{tA: true, m: 33, n: 17, k: 9, alpha: 0, beta: 0, pad: 1, nanC: true, packed: true}.check(t, rng)
	}
	forEachKernelAndGonum(t, run)
}

// TestGemmPackedBitForBit checks that with an assembly kernel GemmPacked
// rounds exactly as GemmBias and Gemm do on the matrix B was packed from,
// on one core and on several.
func TestGemmPackedBitForBit(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		for _, procs := range []int{1, 3} {
			old := runtime.GOMAXPROCS(procs)
			rng := rand.New(rand.NewPCG(23, uint64(procs)))
			for _, sh := range packedShapes {
				m, n, k := sh[0], sh[1], sh[2]
				for tr := range 4 {
					tA, tB := tr&1 != 0, tr&2 != 0
					a := randFloats(rng, m*k)
					b := randFloats(rng, k*n)
					bias := randFloats(rng, n)
					lda, ldb := lda(tA, m, k), lda(tB, k, n)
					p := PackB(tB, k, n, b, ldb)
					for _, row := range [][]float32{nil, bias} {
						c0 := randFloats(rng, m*n)
						want := append([]float32(nil), c0...)
						got := append([]float32(nil), c0...)
						if row == nil {
							Gemm(tA, tB, m, n, k, -2, a, lda, b, ldb, 0.25, want, n)
						} else {
							GemmBias(tA, tB, m, n, k, -2, a, lda, b, ldb, 0.25, want, n, row)
						}
						GemmPacked(tA, m, -2, a, lda, p, 0.25, got, n, row)
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("procs=%d m=%d n=%d k=%d tA=%v tB=%v bias=%v: C[%d] = %v, GemmBias %v", procs, m, n, k, tA, tB, row != nil, i, got[i], want[i])
							}
						}
					}
				}
			}
			runtime.GOMAXPROCS(old)
		}
	})
}

// TestPackBIsASnapshot checks that changing B after PackB leaves the
// packed copy as it was, with and without a kernel.
func TestPackBIsASnapshot(t *testing.T) {
	run := func(t *testing.T) {
		rng := rand.New(rand.NewPCG(24, 25))
		m, n, k := 30, 70, 50
		a, b := randFloats(rng, m*k), randFloats(rng, n*k)
		p := PackB(true, k, n, b, k)
		want := make([]float32, m*n)
		GemmPacked(false, m, 1, a, k, p, 0, want, n, nil)
		for i := range b {
			b[i] = 0
		}
		got := make([]float32, m*n)
		GemmPacked(false, m, 1, a, k, p, 0, got, n, nil)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("C[%d] = %v after B was cleared, want %v", i, got[i], want[i])
			}
		}
		if p.k != k || p.n != n {
			t.Fatalf("packed B is (%d, %d), want (%d, %d)", p.k, p.n, k, n)
		}
	}
	forEachKernelAndGonum(t, run)
}

// TestPackedPanelsMemory checks the panels' storage: aligned for the
// kernels, and zero past the last column, which the kernels of partial
// tiles may read.
func TestPackedPanelsMemory(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(26, 27))
		for _, sh := range [][2]int{{1000, 1100}, {7, 9}} { // about 4 MiB (huge pages), and tiny
			k, n := sh[0], sh[1]
			b := randFloats(rng, k*n)
			p := PackB(false, k, n, b, n)
			if p.panels == nil {
				t.Fatal("no panels with an assembly kernel")
			}
			d := p.panels.data
			if want := k * active.roundCols(n); len(d) != want {
				t.Fatalf("k=%d n=%d: %d floats packed, want %d", k, n, len(d), want)
			}
			if uintptr(unsafe.Pointer(&d[0]))%64 != 0 {
				t.Fatalf("k=%d n=%d: panels not 64-byte aligned", k, n)
			}
			nr, kc := active.nr, p.panels.kc
			for pc := 0; pc < k; pc += kc {
				kcb := min(kc, k-pc)
				for j := 0; j < n; j += nr {
					panel := d[p.panels.offset(pc, kcb, j):][:kcb*nr]
					for q := range kcb {
						for x := range nr {
							want := float32(0)
							if j+x < n {
								want = b[(pc+q)*n+j+x]
							}
							if panel[q*nr+x] != want {
								t.Fatalf("k=%d n=%d: panel at step %d, column %d holds %v, want %v", k, n, pc+q, j+x, panel[q*nr+x], want)
							}
						}
					}
				}
			}
		}
		// The mapped memory is released with its owner; collecting it must
		// not disturb the live panels of others.
		keep := PackB(false, 1000, 1100, randFloats(rng, 1000*1100), 1100)
		for range 3 {
			_ = PackB(false, 1000, 1100, randFloats(rng, 1000*1100), 1100)
			runtime.GC()
		}
		for _, v := range keep.panels.data {
			if math.IsNaN(float64(v)) {
				t.Fatal("NaN in live panels")
			}
		}
	})
}

func randFloats(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = rng.Float32()*2 - 1
	}
	return s
}

// forEachKernelAndGonum runs f as a subtest for every kernel the CPU runs
// and for gonum's products.
func forEachKernelAndGonum(t *testing.T, f func(t *testing.T)) {
	forEachKernel(t, f)
	t.Run("gonum", func(t *testing.T) {
		useKernel(t, nil)
		f(t)
	})
}
