//go:build !openblas

package blas

import "math"

// Conversions of float32 to the narrow formats the low-precision kernels
// multiply, as their packing routines apply them.

// toBF16 rounds x to bfloat16 (float32's sign and exponent, 7 bits of
// mantissa) to nearest, ties to even, as VCVTNEPS2BF16 does: a denormal x
// becomes a zero of its sign, a NaN a quiet NaN, and a value past the
// largest bfloat16 by half a unit or more infinity.
func toBF16(x float32) uint16 {
	b := math.Float32bits(x)
	switch {
	case b&0x7f800000 == 0: // ±0 or denormal
		return uint16(b>>16) & 0x8000
	case b&0x7fffffff > 0x7f800000: // NaN
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// fromBF16 widens a bfloat16 to float32 exactly.
func fromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// bf16Pair packs x (the even K step) and y (the odd one) as VDPBF16PS
// reads a pair: x in the low 16 bits.
func bf16Pair(x, y float32) uint32 { return uint32(toBF16(x)) | uint32(toBF16(y))<<16 }

// toFP16 rounds x to IEEE binary16 to nearest, ties to even, as
// VCVTPS2PH with rounding control 0 does: subnormal results are kept,
// values from 65520 up become infinity, a NaN a quiet NaN.
func toFP16(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	switch {
	case exp == 0xff && man != 0: // NaN
		return sign | 0x7e00 | uint16(man>>13)
	case exp == 0xff:
		return sign | 0x7c00
	}
	e := exp - 127 + 15 // biased float16 exponent
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal (or zero): the significand with its implicit bit,
		// shifted to units of 2^-24, rounded to nearest even.
		if e < -10 {
			return sign // below half the smallest subnormal
		}
		m := man | 0x800000
		shift := uint(14 - e) // 13 bits of float32's extra mantissa, plus 1-e
		half := uint32(1) << (shift - 1)
		r := m >> shift
		rem := m & (1<<shift - 1)
		if rem > half || rem == half && r&1 == 1 {
			r++
		}
		return sign | uint16(r)
	}
	// Normal: drop 13 mantissa bits with rounding; a carry may roll into
	// the exponent, and from the largest finite value into infinity.
	h := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++
	}
	return sign | uint16(h)
}

// fromFP16 widens a float16 to float32 exactly.
func fromFP16(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
	}
	// Subnormal or zero: man·2^-24, exact in float32.
	f := float32(man) * (1.0 / (1 << 24))
	return math.Float32frombits(sign | math.Float32bits(f))
}
