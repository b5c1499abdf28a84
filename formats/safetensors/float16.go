package safetensors

import "math"

// Float16ToFloat32 converts IEEE 754 half precision bits to float32
// (exactly: every half value is a float32 value).
func Float16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // Inf or NaN, payload kept
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0: // zero or subnormal: mant × 2^-24
		f := float32(mant) * (1.0 / (1 << 24))
		return math.Float32frombits(sign | math.Float32bits(f))
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// Float32ToFloat16 rounds f to the nearest half precision value (ties to
// even), like PyTorch's c10::Half: values beyond 65520 become ±Inf, tiny
// values become half subnormals or ±0, and every NaN becomes the quiet NaN
// 0x7e00 with f's sign.
func Float32ToFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15 // biased half exponent
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Half subnormal: the 24-bit significand shifted so that one unit
		// is 2^-24. Below 2^-25 everything rounds to zero.
		if e < -10 {
			return sign
		}
		return sign | uint16(roundShift(mant|0x800000, uint(14-e)))
	}
	// A carry out of the mantissa correctly bumps the exponent (to Inf
	// at the top).
	return sign | uint16(roundShift(uint32(e)<<23|mant, 13))
}

// roundShift returns x >> s rounded to nearest, ties to even (1 ≤ s ≤ 24).
func roundShift(x uint32, s uint) uint32 {
	q := x >> s
	rem := x & (1<<s - 1)
	half := uint32(1) << (s - 1)
	if rem > half || (rem == half && q&1 == 1) {
		q++
	}
	return q
}

// BFloat16ToFloat32 converts bfloat16 bits to float32 (exactly).
func BFloat16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// Float32ToBFloat16 rounds f to the nearest bfloat16 value (ties to even),
// like PyTorch's c10::BFloat16: every NaN becomes 0x7fc0.
func Float32ToBFloat16(f float32) uint16 {
	if f != f {
		return 0x7fc0
	}
	return uint16(roundShift(math.Float32bits(f), 16))
}
