//go:build amd64 && !purego

package imageshard

import (
	"math/bits"

	"golang.org/x/sys/cpu"
)

func init() {
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VPCLMULQDQ && cpu.X86.HasPCLMULQDQ && cpu.X86.HasSSE42 {
		foldUpdate = func(state uint32, p []byte) uint32 { return foldCRC32C(state, p, &foldConstants) }
	}
}

// foldCRC32C is foldUpdate by carry-less multiplication (AVX-512
// VPCLMULQDQ, checksum_amd64.s): the first 256 bytes, with state added
// into their first four, are sixteen 128-bit lanes; each next 256 bytes
// are added to the lanes moved 2048 bits on, modulo the polynomial; then
// every lane is moved onto the last, and the CRC32 instruction reduces
// those 16 bytes from a zero register. k is foldConstants.
//
//go:noescape
func foldCRC32C(state uint32, p []byte, k *[40]uint64) uint32

// foldConstants are foldCRC32C's multipliers, foldPair's two for each
// 128-bit lane: the first four lanes move 2048 bits (one block) on; the
// next sixteen move lane j of the last block (15-j)·128 bits on, onto
// lane 15 (whose own multipliers are zero: it is added as it is).
var foldConstants = func() (k [40]uint64) {
	for l := range 4 {
		k[2*l], k[2*l+1] = foldPair(2048)
	}
	for j := range 15 {
		k[8+2*j], k[8+2*j+1] = foldPair((15 - j) * 128)
	}
	return k
}()

// castagnoliPoly is the CRC-32C polynomial with its x^32 term, bit i the
// coefficient of x^i.
const castagnoliPoly = 0x11EDC6F41

// xPowMod returns x^n modulo castagnoliPoly.
func xPowMod(n int) uint64 {
	r := uint64(1)
	for range n {
		r <<= 1
		if r>>32 != 0 {
			r ^= castagnoliPoly
		}
	}
	return r
}

// foldPair returns the multipliers that move a 128-bit lane V d bits on
// (d >= 1): a value congruent to V·x^d modulo the polynomial, in 128 bits,
// as the carry-less products of V's low quadword by lo and of its high
// quadword by hi, added. The CRC is reflected: a lane's low quadword holds
// its higher-degree coefficients, so V = Vlo·x^64 + Vhi, bit i of a
// quadword the coefficient of x^(63-i), and bit k of a product that of
// x^(127-k), one degree above the product of what the factors hold. So
// Vlo·x^(d+64) = Vlo·x·(x^(d+63) mod P) and Vhi·x^d = Vhi·x·(x^(d-1) mod P),
// each remainder bit-reversed into the quadword.
func foldPair(d int) (lo, hi uint64) {
	return bits.Reverse64(xPowMod(d + 63)), bits.Reverse64(xPowMod(d - 1))
}
