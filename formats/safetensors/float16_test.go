package safetensors

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestFloat16KnownValues(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, tc := range []struct {
		f    float32
		bits uint16
	}{
		{1, 0x3c00},
		{-2, 0xc000},
		{0.5, 0x3800},
		{65504, 0x7bff},                         // largest finite half
		{0x1p-14, 0x0400},                       // smallest normal
		{0x1p-24, 0x0001},                       // smallest subnormal
		{1023 * 0x1p-24, 0x03ff},                // largest subnormal
		{-0x1p-24, 0x8001},                      // negative subnormal
		{0, 0x0000},                             // zero
		{float32(math.Copysign(0, -1)), 0x8000}, // negative zero
		{inf, 0x7c00},
		{-inf, 0xfc00},
	} {
		if got := Float32ToFloat16(tc.f); got != tc.bits {
			t.Errorf("Float32ToFloat16(%g) = %#04x, want %#04x", tc.f, got, tc.bits)
		}
		if got := Float16ToFloat32(tc.bits); math.Float32bits(got) != math.Float32bits(tc.f) {
			t.Errorf("Float16ToFloat32(%#04x) = %g, want %g", tc.bits, got, tc.f)
		}
	}
	for _, tc := range []struct {
		f    float32
		bits uint16
	}{
		{65519, 0x7bff},               // rounds down to 65504
		{65520, 0x7c00},               // halfway to 65536: ties to even, i.e. Inf
		{1e6, 0x7c00},                 // overflow
		{0x1p-25, 0x0000},             // halfway to the smallest subnormal: even is 0
		{0x1.8p-25, 0x0001},           // above halfway
		{0x1p-26, 0x0000},             // underflow
		{1 + 0x1p-11, 0x3c00},         // tie between 1 and 1+2^-10: even
		{1 + 3*0x1p-11, 0x3c02},       // tie: rounds up to even
		{1.0 / 3, 0x3555},             // 0.333251953125
		{-1023.5 * 0x1p-24, 0x8400},   // subnormal rounding carries into the exponent
		{float32(math.NaN()), 0x7e00}, // quiet NaN
		{-float32(math.NaN()), 0xfe00},
	} {
		if got := Float32ToFloat16(tc.f); got != tc.bits {
			t.Errorf("Float32ToFloat16(%g) = %#04x, want %#04x", tc.f, got, tc.bits)
		}
	}
	if f := Float16ToFloat32(0x7e01); !math.IsNaN(float64(f)) {
		t.Errorf("Float16ToFloat32(0x7e01) = %g, want NaN", f)
	}
}

func TestBFloat16KnownValues(t *testing.T) {
	for _, tc := range []struct {
		f    float32
		bits uint16
	}{
		{1, 0x3f80},
		{-2, 0xc000},
		{0x1p-133, 0x0001},   // smallest subnormal
		{0x1.fep127, 0x7f7f}, // largest finite
		{float32(math.Inf(1)), 0x7f80},
		{float32(math.Inf(-1)), 0xff80},
		{float32(math.Copysign(0, -1)), 0x8000},
	} {
		if got := Float32ToBFloat16(tc.f); got != tc.bits {
			t.Errorf("Float32ToBFloat16(%g) = %#04x, want %#04x", tc.f, got, tc.bits)
		}
		if got := BFloat16ToFloat32(tc.bits); math.Float32bits(got) != math.Float32bits(tc.f) {
			t.Errorf("BFloat16ToFloat32(%#04x) = %g, want %g", tc.bits, got, tc.f)
		}
	}
	for _, tc := range []struct {
		f    float32
		bits uint16
	}{
		{65504, 0x4780},               // 65536: bfloat16 has 8 significant bits
		{1 + 0x1p-8, 0x3f80},          // tie: even
		{1 + 3*0x1p-8, 0x3f82},        // tie: up to even
		{math.MaxFloat32, 0x7f80},     // rounds to Inf
		{float32(math.NaN()), 0x7fc0}, // canonical NaN
	} {
		if got := Float32ToBFloat16(tc.f); got != tc.bits {
			t.Errorf("Float32ToBFloat16(%g) = %#04x, want %#04x", tc.f, got, tc.bits)
		}
	}
}

// TestHalfRoundTripsExhaustively converts every non-NaN half and bfloat16
// value to float32 and back.
func TestHalfRoundTripsExhaustively(t *testing.T) {
	for h := range 1 << 16 {
		b := uint16(h)
		if f := Float16ToFloat32(b); f == f {
			if back := Float32ToFloat16(f); back != b {
				t.Fatalf("half %#04x → %g → %#04x", b, f, back)
			}
		}
		if f := BFloat16ToFloat32(b); f == f {
			if back := Float32ToBFloat16(f); back != b {
				t.Fatalf("bfloat16 %#04x → %g → %#04x", b, f, back)
			}
		}
	}
}

// TestFloat32ToFloat16IsNearest checks random float32 values against a
// search over all finite half values (nearest, ties to even mantissa).
func TestFloat32ToFloat16IsNearest(t *testing.T) {
	var values []float64 // non-negative finite halves in increasing order
	var codes []uint16
	for h := uint16(0); h < 0x7c00; h++ {
		values = append(values, float64(Float16ToFloat32(h)))
		codes = append(codes, h)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		// Exponents spread over the half range and a little beyond.
		f := float32(math.Ldexp(rng.Float64(), rng.IntN(46)-30))
		want := nearestHalf(float64(f), values, codes)
		if got := Float32ToFloat16(f); got != want {
			t.Fatalf("Float32ToFloat16(%g) = %#04x, want %#04x", f, got, want)
		}
		if got := Float32ToFloat16(-f); got != want|0x8000 {
			t.Fatalf("Float32ToFloat16(%g) = %#04x, want %#04x", -f, got, want|0x8000)
		}
	}
}

func nearestHalf(x float64, values []float64, codes []uint16) uint16 {
	const maxHalf, next = 65504.0, 65536.0
	if x >= (maxHalf+next)/2 {
		return 0x7c00
	}
	i, _ := slices.BinarySearch(values, x) // values[i-1] < x ≤ values[i]
	if i == len(values) {
		return codes[len(codes)-1]
	}
	if i == 0 || values[i] == x {
		return codes[i]
	}
	lo, hi := x-values[i-1], values[i]-x
	switch {
	case lo < hi:
		return codes[i-1]
	case hi < lo:
		return codes[i]
	case codes[i-1]%2 == 0:
		return codes[i-1]
	}
	return codes[i]
}
