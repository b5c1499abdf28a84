//go:build !openblas

package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"

	gblas "gonum.org/v1/gonum/blas"
	"gorgonia.org/gorgonia"

	"github.com/vit-train/vit-train/internal/allocs"
)

// useKernel makes kern (nil: gonum) the active float32 kernel until the
// test ends.
func useKernel(t testing.TB, kern *kernel) {
	old := active
	active = kern
	t.Cleanup(func() { active = old })
}

// forEachKernel runs f as a subtest for every kernel the CPU runs.
func forEachKernel(t *testing.T, f func(t *testing.T)) {
	ks := cpuKernels()
	if len(ks) == 0 {
		t.Skip("no assembly kernel on this CPU or build")
	}
	for _, kern := range ks {
		t.Run(kern.name, func(t *testing.T) {
			useKernel(t, kern)
			f(t)
		})
	}
}

// guard fills the unused parts of strided storage.
const guard = float32(-1234.5)

// operand is a row-major (rows, cols) matrix with stride ld inside a
// slice whose padding (past cols in each row, and a tail) holds fill.
type operand struct {
	rows, cols, ld int
	data           []float32
}

func newOperand(rng *rand.Rand, rows, cols, pad int, fill float32) operand {
	ld := max(1, cols) + pad
	o := operand{rows, cols, ld, make([]float32, rows*ld+pad)}
	for i := range o.data {
		o.data[i] = fill
	}
	for i := range rows {
		for j := range cols {
			o.data[i*ld+j] = rng.Float32()*2 - 1
		}
	}
	return o
}

func (o operand) inside(idx int) bool {
	return idx < o.rows*o.ld && idx%o.ld < o.cols
}

// gemmCase is one product to check against the float64 loop product.
type gemmCase struct {
	tA, tB      bool
	m, n, k     int
	alpha, beta float32
	pad         int  // extra stride and tail of every operand
	nanC        bool // C starts as NaN (only with beta = 0)
	bias        bool // through GemmBias, with a random bias row
	packed      bool // B through PackB and the product through GemmPacked
}

func (tc gemmCase) String() string {
	return fmt.Sprintf("tA=%v tB=%v m=%d n=%d k=%d alpha=%v beta=%v pad=%d nanC=%v bias=%v packed=%v", tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, tc.beta, tc.pad, tc.nanC, tc.bias, tc.packed)
}

// check runs tc through Gemm, GemmBias or GemmPacked and compares every
// element of C with the float64 product, within 2·(k+2)·eps32 of Σ|alpha·a·b| +
// |beta·c| + |bias|, and checks that nothing outside C changed and A, B
// and the bias are untouched.
func (tc gemmCase) check(t *testing.T, rng *rand.Rand) {
	t.Helper()
	ra, ca := storedShape(tc.tA, tc.m, tc.k)
	rb, cb := storedShape(tc.tB, tc.k, tc.n)
	nan := float32(math.NaN())
	// NaN in the padding of A and B: a kernel that reads past the
	// matrices, and uses what it reads, poisons C.
	a := newOperand(rng, ra, ca, tc.pad, nan)
	b := newOperand(rng, rb, cb, tc.pad, nan)
	c := newOperand(rng, tc.m, tc.n, tc.pad, guard)
	if tc.nanC {
		for i := range tc.m {
			for j := range tc.n {
				c.data[i*c.ld+j] = nan
			}
		}
	}
	// The bias row is followed by NaN, which a read past its end uses.
	bias := newOperand(rng, 1, tc.n, tc.pad+1, nan)
	a0 := append([]float32(nil), a.data...)
	b0 := append([]float32(nil), b.data...)
	c0 := append([]float32(nil), c.data...)
	bias0 := append([]float32(nil), bias.data...)
	switch {
	case tc.packed:
		var row []float32
		if tc.bias {
			row = bias.data[:tc.n]
		}
		GemmPacked(tc.tA, tc.m, tc.alpha, a.data, a.ld, PackB(tc.tB, tc.k, tc.n, b.data, b.ld), tc.beta, c.data, c.ld, row)
	case tc.bias:
		GemmBias(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a.data, a.ld, b.data, b.ld, tc.beta, c.data, c.ld, bias.data[:tc.n])
	default:
		Gemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a.data, a.ld, b.data, b.ld, tc.beta, c.data, c.ld)
	}
	for _, in := range []struct {
		name      string
		now, then []float32
	}{{"A", a.data, a0}, {"B", b.data, b0}, {"bias", bias.data, bias0}} {
		for i := range in.now {
			if math.Float32bits(in.now[i]) != math.Float32bits(in.then[i]) {
				t.Fatalf("%v: %s changed at %d", tc, in.name, i)
			}
		}
	}
	// op(A) and op(B)ᵀ as contiguous float64 rows of k.
	k := tc.k
	opA := make([]float64, tc.m*k)
	opBt := make([]float64, tc.n*k)
	for i := range tc.m {
		for p := range k {
			if tc.tA {
				opA[i*k+p] = float64(a.data[p*a.ld+i])
			} else {
				opA[i*k+p] = float64(a.data[i*a.ld+p])
			}
		}
	}
	for j := range tc.n {
		for p := range k {
			if tc.tB {
				opBt[j*k+p] = float64(b.data[j*b.ld+p])
			} else {
				opBt[j*k+p] = float64(b.data[p*b.ld+j])
			}
		}
	}
	for idx, v := range c.data {
		if !c.inside(idx) {
			if v != guard {
				t.Fatalf("%v: C[%d] outside the matrix changed to %v", tc, idx, v)
			}
			continue
		}
		i, j := idx/c.ld, idx%c.ld
		var s, abs float64
		ar, br := opA[i*k:i*k+k], opBt[j*k:j*k+k]
		for p, x := range ar {
			y := x * br[p]
			s += y
			abs += math.Abs(y)
		}
		want := float64(tc.alpha) * s
		bound := math.Abs(float64(tc.alpha)) * abs
		if tc.beta != 0 {
			want += float64(tc.beta) * float64(c0[idx])
			bound += math.Abs(float64(tc.beta) * float64(c0[idx]))
		}
		if tc.bias {
			want += float64(bias.data[j])
			bound += math.Abs(float64(bias.data[j]))
		}
		tol := 2*float64(tc.k+2)*(1.0/(1<<23))*bound + 1e-30
		if d := math.Abs(float64(v) - want); !(d <= tol) {
			t.Fatalf("%v: C[%d,%d] = %v, want %v (error %.3g > %.3g)", tc, i, j, v, want, d, tol)
		}
	}
}

var scalars = [][2]float32{{1, 0}, {1, 1}, {1, 0.25}, {0.5, 0}, {0.5, 1}, {0.5, 0.25}, {-2, 0}, {-2, 1}, {-2, 0.25}}

func TestSgemmSmallSizes(t *testing.T) {
	sizes := []int{1, 2, 7, 13, 31, 33, 65}
	forEachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(2, 3))
		n := 0
		for _, m := range sizes {
			for _, nn := range sizes {
				for _, k := range sizes {
					for tr := range 4 {
						s := scalars[n%len(scalars)]
						tc := gemmCase{tA: tr&1 != 0, tB: tr&2 != 0, m: m, n: nn, k: k, alpha: s[0], beta: s[1], pad: n % 3 * 2}
						tc.nanC = tc.beta == 0 && n%2 == 0
						tc.bias = n%3 == 0
						tc.check(t, rng)
						n++
					}
				}
			}
		}
	})
}

func TestSgemmLargeSizes(t *testing.T) {
	sizes := []int{1, 7, 13, 31, 33, 63, 65, 97, 197, 257, 300}
	forEachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(4, 5))
		n := 0
		for _, m := range sizes {
			for _, nn := range sizes {
				// One k per (m, n), the larger ones cycling through the list;
				// every transpose pair and alpha/beta in turn.
				k := sizes[(n*5+3)%len(sizes)]
				if testing.Short() && m*nn*k > 1<<21 {
					continue
				}
				s := scalars[n%len(scalars)]
				tc := gemmCase{tA: n&1 != 0, tB: n&2 != 0, m: m, n: nn, k: k, alpha: s[0], beta: s[1], pad: 1 + n%4}
				tc.nanC = tc.beta == 0
				tc.bias = n%2 == 1
				tc.check(t, rng)
				n++
			}
		}
	})
}

// TestSgemmAllScalars runs every alpha/beta pair and transpose pair, with
// and without a bias, on sizes that cross the K block, the parallel split
// and partial tiles.
func TestSgemmAllScalars(t *testing.T) {
	shapes := [][3]int{{65, 97, 64}, {197, 65, 400}, {130, 257, 800}, {13, 300, 33}, {29, 70, 1700}}
	forEachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(6, 7))
		for _, sh := range shapes {
			for tr := range 4 {
				for si, s := range scalars {
					for _, bias := range []bool{false, true} {
						tc := gemmCase{tA: tr&1 != 0, tB: tr&2 != 0, m: sh[0], n: sh[1], k: sh[2], alpha: s[0], beta: s[1], pad: si % 3, nanC: s[1] == 0, bias: bias}
						tc.check(t, rng)
					}
				}
			}
		}
	})
}

// TestGemmBiasGonum checks GemmBias where no assembly kernel runs: the
// bias is added to C before gonum's product.
func TestGemmBiasGonum(t *testing.T) {
	useKernel(t, nil)
	rng := rand.New(rand.NewPCG(10, 11))
	for tr := range 4 {
		for _, s := range scalars {
			gemmCase{tA: tr&1 != 0, tB: tr&2 != 0, m: 37, n: 45, k: 29, alpha: s[0], beta: s[1], pad: 1, nanC: s[1] == 0, bias: true}.check(t, rng)
		}
	}
}

// TestSgemmWorkers checks the split over more workers than cores.
func TestSgemmWorkers(t *testing.T) {
	for _, procs := range []int{1, 3, 8} {
		old := runtime.GOMAXPROCS(procs)
		forEachKernel(t, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(8, uint64(procs)))
			for tr := range 4 {
				gemmCase{tA: tr&1 != 0, tB: tr&2 != 0, m: 301, n: 259, k: 401, alpha: -2, beta: 0.25, pad: 3}.check(t, rng)
				gemmCase{tA: tr&1 != 0, tB: tr&2 != 0, m: 29, n: 1500, k: 97, alpha: 1, beta: 0, pad: 1, nanC: true}.check(t, rng)
				gemmCase{tA: tr&1 != 0, tB: tr&2 != 0, m: 300, n: 1100, k: 300, alpha: 1, beta: 0, pad: 2, nanC: true, bias: true}.check(t, rng)
			}
		})
		runtime.GOMAXPROCS(old)
	}
}

// TestSgemmDegenerate checks that k = 0 and alpha = 0 only scale C (and
// add the bias), and that beta = 0 then clears NaN.
func TestSgemmDegenerate(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 9))
		for _, s := range scalars {
			gemmCase{m: 5, n: 40, k: 0, alpha: s[0], beta: s[1], pad: 2, nanC: s[1] == 0}.check(t, rng)
			gemmCase{tA: true, m: 33, n: 17, k: 9, alpha: 0, beta: s[1], pad: 1, nanC: s[1] == 0}.check(t, rng)
			gemmCase{m: 5, n: 40, k: 0, alpha: s[0], beta: s[1], pad: 2, nanC: s[1] == 0, bias: true}.check(t, rng)
			gemmCase{tA: true, m: 33, n: 17, k: 9, alpha: 0, beta: s[1], pad: 1, nanC: s[1] == 0, bias: true}.check(t, rng)
		}
	})
}

// TestSgemmConcurrent runs products from several goroutines at once, as
// attention's per-head loop does.
func TestSgemmConcurrent(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		var wg sync.WaitGroup
		for g := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(10, uint64(g)))
				for it := range 8 {
					m := []int{65, 197, 300, 40}[(g+it)%4]
					gemmCase{tA: it&1 != 0, tB: g&1 != 0, m: m, n: 65 + 61*g, k: 64 + 50*it, alpha: 0.5, beta: 1, pad: 1}.check(t, rng)
				}
			}()
		}
		wg.Wait()
	})
}

func TestSgemmBadArguments(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		a, b, c := make([]float32, 12), make([]float32, 12), make([]float32, 12)
		for _, tc := range []struct {
			name string
			f    func()
		}{
			{"lda", func() { Gemm(false, false, 3, 4, 3, 1, a, 2, b, 4, 0, c, 4) }},
			{"ldb", func() { Gemm(false, true, 3, 4, 3, 1, a, 3, b, 2, 0, c, 4) }},
			{"ldc", func() { Gemm(false, false, 3, 4, 3, 1, a, 3, b, 4, 0, c, 3) }},
			{"a", func() { Gemm(false, false, 5, 4, 3, 1, a, 3, b, 4, 0, make([]float32, 20), 4) }},
			{"b", func() { Gemm(false, false, 3, 4, 4, 1, a, 4, b, 4, 0, c, 4) }},
			{"c", func() { Gemm(false, false, 3, 5, 3, 1, a, 3, b[:12], 5, 0, c, 5) }},
		} {
			func() {
				defer func() {
					if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), "blas: ") {
						t.Errorf("%s: recovered %v, want a blas panic", tc.name, r)
					}
				}()
				tc.f()
			}()
		}
	})
}

func TestBackend(t *testing.T) {
	useKernel(t, nil)
	if got := Backend(); got != "gonum" {
		t.Errorf("Backend() with gonum = %q", got)
	}
	for _, k := range cpuKernels() {
		active = k
		if got, want := Backend(), "go-"+k.name; got != want {
			t.Errorf("Backend() = %q, want %q", got, want)
		}
	}
	if ks := cpuKernels(); runtime.GOARCH == "amd64" && len(ks) > 0 && chooseKernel("") != ks[0] {
		t.Errorf("the default kernel is not the fastest")
	}
}

func TestChooseKernel(t *testing.T) {
	if chooseKernel("gonum") != nil {
		t.Error(`chooseKernel("gonum") is not gonum`)
	}
	for _, k := range cpuKernels() {
		if chooseKernel(k.name) != k {
			t.Errorf("chooseKernel(%q) is not that kernel", k.name)
		}
	}
	for _, bad := range []string{"avx", "AVX512", "openblas", " avx2"} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "VIT_TRAIN_GEMM") {
					t.Errorf("chooseKernel(%q): recovered %v, want a panic naming VIT_TRAIN_GEMM", bad, r)
				}
			}()
			chooseKernel(bad)
		}()
	}
}

// TestGemmEnv runs this test binary with VIT_TRAIN_GEMM set: valid values
// select the kernel, others stop the program at start-up.
func TestGemmEnv(t *testing.T) {
	if os.Getenv("VIT_TRAIN_GEMM_CHILD") != "" {
		fmt.Printf("backend=%s\n", Backend())
		return
	}
	run := func(env string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGemmEnv$", "-test.count=1")
		cmd.Env = append(os.Environ(), "VIT_TRAIN_GEMM="+env, "VIT_TRAIN_GEMM_CHILD=1")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	want := map[string]string{"gonum": "gonum"}
	for _, k := range cpuKernels() {
		want[k.name] = "go-" + k.name
	}
	for env, backend := range want {
		out, err := run(env)
		if err != nil || !strings.Contains(out, "backend="+backend+"\n") {
			t.Errorf("VIT_TRAIN_GEMM=%s: %v\n%s", env, err, out)
		}
	}
	out, err := run("fast")
	if err == nil || !strings.Contains(out, `VIT_TRAIN_GEMM="fast" is not a kernel`) {
		t.Errorf("VIT_TRAIN_GEMM=fast: err %v\n%s", err, out)
	}
}

// TestGorgoniaUsesKernel checks that Gorgonia's and tensor's BLAS is the
// type that sends Sgemm here.
func TestGorgoniaUsesKernel(t *testing.T) {
	if _, ok := gorgonia.WhichBLAS().(goBLAS); !ok {
		t.Fatalf("gorgonia.WhichBLAS() is %T", gorgonia.WhichBLAS())
	}
	forEachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 11))
		a := newOperand(rng, 40, 30, 0, 0).data
		b := newOperand(rng, 30, 50, 0, 0).data
		c := make([]float32, 40*50)
		want := make([]float32, 40*50)
		goBLAS{}.Sgemm(gblas.NoTrans, gblas.NoTrans, 40, 50, 30, 1, a, 30, b, 50, 0, c, 50)
		impl.Sgemm(gblas.NoTrans, gblas.NoTrans, 40, 50, 30, 1, a, 30, b, 50, 0, want, 50)
		for i := range c {
			if math.Abs(float64(c[i]-want[i])) > 1e-4 {
				t.Fatalf("c[%d] = %v, gonum %v", i, c[i], want[i])
			}
		}
	})
}

func TestSgemmAllocs(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		for _, sh := range [][3]int{{65, 65, 64}, {197, 64, 197}, {300, 300, 300}} {
			m, n, k := sh[0], sh[1], sh[2]
			a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
			for tr := range 4 {
				f := func() {
					Gemm(tr&1 != 0, tr&2 != 0, m, n, k, 1, a, lda(tr&1 != 0, m, k), b, lda(tr&2 != 0, k, n), 0, c, n)
				}
				if got := testing.AllocsPerRun(20, f); got != 0 {
					t.Errorf("%v tr=%d: %v allocations per call", sh, tr, got)
				}
				if got := allocs.Least(0, 50, f); got >= 0.5 {
					t.Errorf("%v tr=%d, on %d threads: %v allocations per call", sh, tr, allocs.Threads(), got)
				}
			}
		}
	})
}

// TestSgemmShapesShareBuffers runs products whose packed B blocks differ
// in size in turn, as a training step does: once warm, the pooled
// buffers serve them all, and no buffer is grown (a stray runtime
// allocation of a few bytes aside).
func TestSgemmShapesShareBuffers(t *testing.T) {
	shapes := [][3]int{{300, 300, 300}, {100, 1000, 1500}, {500, 200, 800}, {400, 90, 70}}
	forEachKernel(t, func(t *testing.T) {
		f := func() {
			for _, sh := range shapes {
				m, n, k := sh[0], sh[1], sh[2]
				// A, B and C apart: the tasks write C while others pack B.
				a, b, c := scratch[:m*k], scratch[m*k:m*k+k*n], scratch[m*k+k*n:m*k+k*n+m*n]
				Gemm(false, true, m, n, k, 1, a, k, b, k, 0, c, n)
			}
		}
		for range 5 {
			f()
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 40 {
			f()
		}
		runtime.ReadMemStats(&after)
		if grown := after.TotalAlloc - before.TotalAlloc; grown >= 16<<10 {
			t.Errorf("GOMAXPROCS=%d: %d bytes allocated over 40 rounds of %d products", runtime.GOMAXPROCS(0), grown, len(shapes))
		}
	})
}

// scratch backs the operands of TestSgemmShapesShareBuffers.
var scratch = make([]float32, 2<<20)

// lda is the minimal stride of op(X) = (rows, cols) stored transposed or not.
func lda(trans bool, rows, cols int) int {
	if trans {
		return rows
	}
	return cols
}

// TestPack compares each kernel's packing with the reference packAGo and
// packBGo, on panels with partial rows or columns and odd lengths, with
// NaN around the source so that a read past it shows.
func TestPack(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		kern := active
		rng := rand.New(rand.NewPCG(12, 12))
		for _, kc := range []int{1, 2, 15, 16, 17, 31, 33, 64, 65, 197, 384} {
			for _, trans := range []bool{false, true} {
				for _, w := range []int{kern.mr, kern.nr} {
					for _, n := range []int{1, w/2 + 1, w - 1, w} {
						if n < 1 || n > w {
							continue
						}
						// op(X) block: n rows (or columns) by kc, stored with
						// padding so that reads outside the block meet NaN.
						ld := kc + 3
						rows, cols := n, kc // A not transposed, B transposed: stored n×kc
						if trans {
							// A transposed or B not: stored kc×n.
							ld, rows, cols = n+5, kc, n
						}
						src := make([]float32, (rows+2)*ld)
						for i := range src {
							src[i] = float32(math.NaN())
						}
						for r := range rows {
							for c := range cols {
								src[(r+1)*ld+c+2] = rng.Float32()
							}
						}
						off := ld + 2
						got := make([]float32, w*kc)
						want := make([]float32, w*kc)
						for i := range got {
							got[i], want[i] = 7, 7
						}
						if w == kern.mr {
							kern.packA(got, w, src[off:], ld, trans, 0, n, 0, kc)
							packAGo(want, w, src[off:], ld, trans, 0, n, 0, kc)
						} else {
							kern.packB(got, w, src[off:], ld, !trans, 0, n, 0, kc)
							packBGo(want, w, src[off:], ld, !trans, 0, n, 0, kc)
						}
						for i := range want {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("width %d, %d of %d, kc %d, trans %v: packed[%d] = %v, want %v", w, n, w, kc, trans, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	})
}
