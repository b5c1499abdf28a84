//go:build !openblas

package blas

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGemmPackedConverted checks that a product reading A from a
// ConvertedA, converted block by block in any order, is GemmPackedThen's
// bit for bit, for every variant that runs here, including after the
// pool handed the storage out dirty; that only the kernels that read A
// as rows (bf16's and amx's) take one; that one as large as
// streamedConversionBytes (the last shape) is written with streaming
// stores; and that a ConvertedA for another shape is passed over.
func TestGemmPackedConverted(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 5))
	for _, v := range runningVariants(t, Variants()) {
		for _, sh := range []struct{ m, n, k int }{{1, 40, 64}, {37, 45, 97}, {100, 300, 128}, {65, 129, 1542}, {300, 200, 768}, {8256, 16, 2048}} {
			var conv ConvertedA
			// Leave garbage in the pool's storage: NaN bits wherever
			// padding is not zeroed.
			if conv.Reset(v, sh.m, sh.k) {
				for i := range *conv.data {
					(*conv.data)[i] = math.Float32frombits(0x7fc07fc0)
				}
			}
			a, b, bias := randFloats(rng, sh.m*sh.k), randFloats(rng, sh.k*sh.n), randFloats(rng, sh.n)
			packed := PackBAs(v, true, sh.k, sh.n, b, sh.k)
			want := make([]float32, sh.m*sh.n)
			GemmPackedThen(false, sh.m, 1, a, sh.k, packed, 0, want, sh.n, bias, nil)

			reads := conv.Reset(v, sh.m, sh.k)
			if reads != ((v == BF16 || v == AMX) && sh.k >= lowPrecisionMinK) {
				t.Fatalf("%s %v: Reset reports %v", v, sh, reads)
			}
			if reads {
				if big := sh.m*sh.k > 1<<24; conv.stream != big { // the last shape
					t.Fatalf("%s %v: streaming %v", v, sh, conv.stream)
				}
				convertInBlocks(rng, &conv, a, sh.m, sh.k)
			}
			got := make([]float32, sh.m*sh.n)
			GemmPackedConvertedThen(sh.m, 1, a, sh.k, &conv, packed, 0, got, sh.n, bias, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("%s %v: the product from converted rows differs from GemmPackedThen's", v, sh)
			}

			// Rows converted for another K are not read: the product
			// converts a itself.
			var other ConvertedA
			if other.Reset(v, sh.m, sh.k+2) {
				clear(got)
				GemmPackedConvertedThen(sh.m, 1, a, sh.k, &other, packed, 0, got, sh.n, bias, nil)
				if !slices.Equal(got, want) {
					t.Fatalf("%s %v: a ConvertedA of another K was read", v, sh)
				}
			}
			other.Release()
			conv.Release()
		}
	}
}

// convertInBlocks converts a (m, k) into c as blocks of random rows and
// columns (starting at multiples of Align), in random order.
func convertInBlocks(rng *rand.Rand, c *ConvertedA, a []float32, m, k int) {
	cuts := func(n, align int) []int {
		at := []int{0}
		for at[len(at)-1] < n {
			at = append(at, min(n, at[len(at)-1]+align*(1+rng.IntN(max(1, 40/align)))))
		}
		return at
	}
	rows, cols := cuts(m, 1), cuts(k, c.Align())
	var blocks [][4]int
	for r := 1; r < len(rows); r++ {
		for q := 1; q < len(cols); q++ {
			blocks = append(blocks, [4]int{rows[r-1], rows[r], cols[q-1], cols[q]})
		}
	}
	rng.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
	for _, b := range blocks {
		c.Convert(a, k, b[0], b[1], b[2], b[3])
	}
}

// TestConvertedABounds checks that Convert refuses blocks outside A or
// starting between words.
func TestConvertedABounds(t *testing.T) {
	var c ConvertedA
	v := BF16
	if !v.Runs() {
		v = AMX
	}
	if !c.Reset(v, 10, 64) {
		t.Skip("no variant that reads converted rows runs here")
	}
	defer c.Release()
	a := make([]float32, 10*64)
	for _, b := range [][4]int{{0, 11, 0, 64}, {-1, 2, 0, 64}, {0, 2, 1, 64}, {0, 2, 0, 65}, {3, 2, 0, 64}, {0, 2, 0, 33}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Convert(%v) did not panic", b)
				}
			}()
			c.Convert(a, 64, b[0], b[1], b[2], b[3])
		}()
	}
}
