package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// SumRows (the bias gradient) adds each column's rows in order, as a
// scalar loop does, bit for bit, at every width the column split meets.
func TestSumRowsAddsRowsInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 15, 16, 37, 64, 192, 768, 2500} {
		const rows = 257
		x := make([]float32, rows*n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(6)-3)))
		}
		got, err := newSumRows(2).Do(tensor.New(tensor.WithShape(rows, n), tensor.WithBacking(x)))
		if err != nil {
			t.Fatal(err)
		}
		for j, g := range got.Data().([]float32) {
			var want float32
			for r := range rows {
				want += x[r*n+j]
			}
			if g != want {
				t.Fatalf("n %d, column %d: %v, want %v", n, j, g, want)
			}
		}
	}
}

// BenchmarkSumRows sums the rows of output gradients shaped like
// vit_cifar_patch4_32's at batch 64 (4160 tokens) and ViT-B/16's at
// batch 32 (6304 tokens) for their bias gradients.
func BenchmarkSumRows(b *testing.B) {
	for _, s := range []struct{ rows, n int }{{4160, 192}, {4160, 576}, {4160, 768}, {6304, 768}, {6304, 3072}} {
		x := make([]float32, s.rows*s.n)
		for i := range x {
			x[i] = float32(i%13) * 0.1
		}
		in := tensor.New(tensor.WithShape(s.rows, s.n), tensor.WithBacking(x))
		out := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(s.n))
		op := newSumRows(2)
		b.Run(fmt.Sprintf("%dx%d", s.rows, s.n), func(b *testing.B) {
			for range b.N {
				if _, err := op.UsePreallocDo(out, in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(4*len(x))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
