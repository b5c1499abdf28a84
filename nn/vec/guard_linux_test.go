//go:build linux

package vec

import (
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"unsafe"
)

// pageEnd maps two pages, makes the second inaccessible and returns the n
// float32 values (or float64 with size 8) that end at the boundary, so a
// kernel that reads or writes past its slice faults. free unmaps them.
func pageEnd(t *testing.T, bytes int) (p unsafe.Pointer, free func()) {
	t.Helper()
	ps := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 2*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	if err := syscall.Mprotect(mem[ps:], syscall.PROT_NONE); err != nil {
		syscall.Munmap(mem)
		t.Skipf("mprotect: %v", err)
	}
	return unsafe.Pointer(&mem[ps-bytes]), func() { syscall.Munmap(mem) }
}

func f32End(t *testing.T, rng *rand.Rand, n int, lo, hi float64) ([]float32, func()) {
	p, free := pageEnd(t, 4*n)
	s := unsafe.Slice((*float32)(p), n)
	for i := range s {
		s[i] = float32(lo + (hi-lo)*rng.Float64())
	}
	return s, free
}

// TestNoAccessPastEnd runs every kernel on slices that end at an
// inaccessible page, for every tail length.
func TestNoAccessPastEnd(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(10, 1))
		for n := 1; n <= 40; n++ {
			var frees []func()
			f := func(lo, hi float64) []float32 {
				s, free := f32End(t, rng, n, lo, hi)
				frees = append(frees, free)
				return s
			}
			x, y, w, b, d, e := f(-2, 2), f(-2, 2), f(0.5, 1.5), f(-1, 1), f(-1, 1), f(0, 1)
			ap, free := pageEnd(t, 8*n)
			frees = append(frees, free)
			acc := unsafe.Slice((*float64)(ap), n)

			Exp(d, x)
			ExpSubMaxSum(d, x, 1)
			// A kernel that read past the end faults above; one that
			// stopped short of it leaves the last element wrong.
			if m := Max(x); m != slices.Max(x) {
				t.Fatalf("n=%d: Max = %v, want %v", n, m, slices.Max(x))
			}
			Scale(d, x, 2)
			if d[n-1] != 2*x[n-1] {
				t.Fatalf("n=%d: Scale's last element %v, want %v", n, d[n-1], 2*x[n-1])
			}
			Sum(x)
			Dot(x, y)
			SumSqDev(x, 0.5)
			Scale(d, x, 2)
			AddConst(d, x, 2)
			AXPY(d, x, 2)
			Add(d, x, y)
			Mul(d, x, y)
			MulDiff(d, y, x, 0.5)
			Erf(d, x)
			GELU(d, x)
			GELUDeriv(d, x)
			GELUAndDeriv(d, b, x)
			GELUAndDerivStreaming(d, b, x)
			CopyStreaming(d, x)
			StoreFence()
			LayerNormRow(d, x, w, b, 0.1, 1.2)
			LayerNormGradSums(x, y, w, 0.1, 1.2)
			LayerNormGradRow(d, x, y, w, 0.1, 1.2, 0.3, 0.4)
			LayerNormGradWeightAcc(acc, x, y, 0.1, 1.2)
			AdamW(d, y, b, e, AdamWCoef{0.9, 0.1, 0.999, 0.001, 1e-8, 1, 1, 1e-3, 0.5})
			SumSquares64(x)
			SumSquares64x4(x, y, b, e)
			for _, free := range frees {
				free()
			}
		}
	})
}
