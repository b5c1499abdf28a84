package ops

import (
	"runtime"

	"github.com/vit-train/vit-train/nn/blas"
	"github.com/vit-train/vit-train/nn/parallel"
)

// groupCols is the least number of columns wanted in one product: small
// images are lowered several samples at a time, side by side in one column
// matrix, so that each GEMM is wide. OpenBLAS runs such products about
// twice as fast as per-sample ones; gonum's kernels gain nothing and the
// extra copies cost, so with gonum each sample is its own product.
var groupCols = groupColsFor(blas.Backend())

func groupColsFor(backend string) int {
	if backend == "openblas" {
		return 8192
	}
	return 1
}

// group returns how many samples to lower into one column matrix: enough
// for groupCols columns, but no more than leaves every worker a group.
func (g convGeom) group(batch int) int {
	perWorker := (batch + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
	return max(1, min(perWorker, (groupCols+g.colCols()-1)/g.colCols()))
}

// groupBody is a loop body over groups of samples: group(s0, m) handles
// samples s0…s0+m−1.
type groupBody[B any] interface {
	*B
	group(s0, m int)
}

// forGroups calls body.group(s0, m) for consecutive groups of m samples
// starting at s0 that cover [0, batch), the groups spread over the
// workers.
func forGroups[B any, P groupBody[B]](g convGeom, batch int, body B) {
	size := g.group(batch)
	parallel.Loop((batch+size-1)/size, 1, sampleGroups[B, P]{body, size, batch})
}

// sampleGroups is forGroups over a range of groups.
type sampleGroups[B any, P groupBody[B]] struct {
	body        B
	size, batch int
}

func (k *sampleGroups[B, P]) Range(lo, hi int) {
	for gi := lo; gi < hi; gi++ {
		s0 := gi * k.size
		P(&k.body).group(s0, min(k.size, k.batch-s0))
	}
}

// gatherGroup copies samples s0…s0+m−1 of src (B, rows, n) side by side
// into dst (rows, m·n).
func gatherGroup[T Float](src, dst []T, s0, m, rows, n int) {
	for j := 0; j < m; j++ {
		for r := 0; r < rows; r++ {
			copy(dst[r*m*n+j*n:][:n], src[((s0+j)*rows+r)*n:][:n])
		}
	}
}

// scatterGroup is the inverse of gatherGroup: src (rows, m·n) into samples
// s0…s0+m−1 of dst (B, rows, n).
func scatterGroup[T Float](src, dst []T, s0, m, rows, n int) {
	for j := 0; j < m; j++ {
		for r := 0; r < rows; r++ {
			copy(dst[((s0+j)*rows+r)*n:][:n], src[r*m*n+j*n:][:n])
		}
	}
}

// convGroupOf returns samples s0…s0+m−1 of t (B, rows, n) as one (rows, m·n)
// matrix: t's own memory for a single sample, otherwise a scratch buffer
// the caller returns with putScratch.
func convGroupOf[T Float](t []T, s0, m, rows, n int) []T {
	if m == 1 {
		return t[s0*rows*n:][:rows*n]
	}
	buf := getScratch[T](rows * m * n)
	gatherGroup(t, buf, s0, m, rows, n)
	return buf
}
