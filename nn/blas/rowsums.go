package blas

import (
	"github.com/vit-train/vit-train/nn/parallel"
	"github.com/vit-train/vit-train/nn/vec"
)

// sumRun is the steps of a row that RowSums adds in order before adding
// their sum to the row's total. It is the K chunk of Aᵀ that the amx
// kernel converts at a time (transChunk), so that its conversion can add
// up GemmAsSums's sums as it goes.
const sumRun = 32

// sumColumnsBlock is the most rows of op(A) = Aᵀ (columns of A) that one
// pass of RowSums down A adds up: one worker's share at least, and the
// width of its stack buffer for a run's sums.
const sumColumnsBlock = 1024

// RowSums sets sums[i] to the sum of row i of op(A) (m, k) for i < m, in
// float32: each run of sumRun steps of the row is added in order from
// zero, and the runs' sums are added in order to a total from zero. A is
// row-major with row stride lda; op(A) = Aᵀ where transA. The gradient of
// a linear layer's bias is RowSums of its output gradient's transpose;
// GemmAsSums takes the same sums beside the weight's gradient.
func RowSums(transA bool, m, k int, a []float32, lda int, sums []float32) {
	sums = sums[:m]
	clear(sums)
	if k == 0 || m == 0 {
		return
	}
	if transA {
		parallel.Loop(m, sumColumnsBlock, columnSums{a, lda, k, sums})
		return
	}
	for i := range sums {
		row := a[i*lda : i*lda+k]
		for p0 := 0; p0 < k; p0 += sumRun {
			run := float32(0)
			for _, x := range row[p0:min(p0+sumRun, k)] {
				run += x
			}
			sums[i] += run
		}
	}
}

// columnSums is RowSums of op(A) = Aᵀ over the columns of A in a range:
// rows k of A, row stride lda, sums one per column.
type columnSums struct {
	a      []float32
	lda, k int
	sums   []float32
}

func (s *columnSums) Range(lo, hi int) {
	for j0 := lo; j0 < hi; j0 += sumColumnsBlock {
		j1 := min(j0+sumColumnsBlock, hi)
		var buf [sumColumnsBlock]float32
		run := buf[:j1-j0]
		for p0 := 0; p0 < s.k; p0 += sumRun {
			clear(run)
			for p := p0; p < min(p0+sumRun, s.k); p++ {
				vec.Add(run, run, s.a[p*s.lda+j0:p*s.lda+j1])
			}
			vec.Add(s.sums[j0:j1], s.sums[j0:j1], run)
		}
	}
}
