package jpeg

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestIDCTMatchesGeneric checks that idctBlock (the AVX2 version where the
// processor has it) writes idctBlockGeneric's bytes, on random blocks of
// every density and size of coefficients, DC-only ones and extremes.
func TestIDCTMatchesGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const stride = 11
	for n := range 20000 {
		var coef [blockSize]int16
		var q [blockSize]int32
		density := rng.IntN(65)
		mag := []int{1, 16, 256, 2048, 32768}[rng.IntN(5)]
		for i := range coef {
			q[i] = int32(1 + rng.IntN([]int{1, 16, 255, 65535}[n%4]))
			if rng.IntN(64) < density {
				coef[i] = int16(rng.IntN(2*mag) - mag)
			}
		}
		if n%7 == 0 {
			coef = [blockSize]int16{int16(rng.IntN(4096) - 2048)}
		}
		want := make([]byte, 8*stride)
		got := make([]byte, 8*stride)
		for i := range want {
			want[i], got[i] = byte(i), byte(i)
		}
		idctBlockGeneric(&coef, &q, want, stride)
		idctBlock(&coef, &q, got, stride)
		if !bytes.Equal(got, want) {
			t.Fatalf("block %d: coefficients %v, steps %v:\n got %v\nwant %v", n, coef, q, got, want)
		}
	}
}
