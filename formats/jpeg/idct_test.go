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

// TestYCbCrRowMatchesGeneric checks that ycbcrRow (the AVX2 version where
// the processor has it) converts every Y, Cb, Cr as ycbcrRowGeneric does,
// in rows of every length up to 70.
func TestYCbCrRowMatchesGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 4000 {
		w := n % 71
		y, cb, cr := make([]byte, w), make([]byte, w), make([]byte, w)
		for i := range w {
			y[i], cb[i], cr[i] = byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256))
			if n < 256 && i == 0 {
				y[i], cb[i], cr[i] = byte(n), byte(255-n), byte(n*7) // the extremes
			}
		}
		want, got := make([]byte, 3*w), make([]byte, 3*w)
		ycbcrRowGeneric(y, cb, cr, want[:w], want[w:2*w], want[2*w:])
		ycbcrRow(y, cb, cr, got[:w], got[w:2*w], got[2*w:])
		if !bytes.Equal(got, want) {
			t.Fatalf("row %d: YCbCr %v %v %v: got %v, want %v", n, y, cb, cr, got, want)
		}
	}
}

// TestYCbCrHalfRowMatchesGeneric checks ycbcrHalfRow against
// ycbcrHalfRowGeneric as TestYCbCrRowMatchesGeneric does.
func TestYCbCrHalfRowMatchesGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for n := range 4000 {
		w := n % 71
		y, cb, cr := make([]byte, w), make([]byte, (w+1)/2), make([]byte, (w+1)/2)
		for i := range y {
			y[i] = byte(rng.IntN(256))
		}
		for i := range cb {
			cb[i], cr[i] = byte(rng.IntN(256)), byte(rng.IntN(256))
		}
		want, got := make([]byte, 3*w), make([]byte, 3*w)
		ycbcrHalfRowGeneric(y, cb, cr, want[:w], want[w:2*w], want[2*w:])
		ycbcrHalfRow(y, cb, cr, got[:w], got[w:2*w], got[2*w:])
		if !bytes.Equal(got, want) {
			t.Fatalf("row %d: YCbCr %v %v %v: got %v, want %v", n, y, cb, cr, got, want)
		}
	}
}
