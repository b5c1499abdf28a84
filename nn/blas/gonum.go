//go:build !openblas

package blas

import (
	"fmt"
	"os"
	"strings"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// sgemm's own kernel splits large products over the workers itself, and
// so do gonum's kernels.
const splitRows = false

var impl gonum.Implementation

// active is the float32 kernel in use; nil means gonum's. It is set from
// VIT_TRAIN_GEMM (see the package documentation); tests change it.
var active = chooseKernel(os.Getenv("VIT_TRAIN_GEMM"))

// chooseKernel returns the kernel named by VIT_TRAIN_GEMM's value env, or
// the fastest the CPU runs when env is empty.
func chooseKernel(env string) *kernel {
	switch env {
	case "":
		if ks := cpuKernels(); len(ks) > 0 {
			return ks[0]
		}
		return nil
	case "gonum":
		return nil
	}
	names := []string{"gonum"}
	for _, k := range allKernels() {
		names = append(names, k.name)
	}
	for _, k := range allKernels() {
		if k.name != env {
			continue
		}
		for _, ok := range cpuKernels() {
			if ok == k {
				return k
			}
		}
		panic(fmt.Sprintf("blas: VIT_TRAIN_GEMM=%s, but this CPU lacks the instructions of that kernel", env))
	}
	panic(fmt.Sprintf("blas: VIT_TRAIN_GEMM=%q is not a kernel of this build (one of %s)", env, strings.Join(names, ", ")))
}

func backend() string {
	if active == nil {
		return "gonum"
	}
	return "go-" + active.name
}

func trans(t bool) gblas.Transpose {
	if t {
		return gblas.Trans
	}
	return gblas.NoTrans
}

func sgemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if kern := active; kern != nil {
		sgemmKernel(kern, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nil)
		return
	}
	impl.Sgemm(trans(tA), trans(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemmBias is sgemm adding bias to every row of C as the kernel stores
// it; it reports false, doing nothing, where there is no assembly kernel.
func sgemmBias(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32) bool {
	if kern := active; kern != nil {
		sgemmKernel(kern, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, bias)
		return true
	}
	return false
}

func dgemm(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	impl.Dgemm(trans(tA), trans(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// goBLAS satisfies tensor.BLAS: gonum's kernels for everything, with the
// float32 matrix-matrix product of Gorgonia's own MatMul replaced by this
// package's.
type goBLAS struct{ gonum.Implementation }

// Sgemm computes C = alpha·op(A)·op(B) + beta·C with op(A) (m, k), op(B)
// (k, n) and C (m, n), row-major, on the kernel Gemm uses.
func (goBLAS) Sgemm(tA, tB gblas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	sgemm(tA != gblas.NoTrans, tB != gblas.NoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func init() {
	var b goBLAS
	tensor.Use(b)
	gorgonia.Use(b)
}
