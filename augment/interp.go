package augment

import (
	"fmt"
	"math/rand/v2"
)

// Interp selects a resampling filter.
type Interp int

const (
	// Bilinear is PIL's triangle filter (support 1).
	Bilinear Interp = iota
	// Bicubic is PIL's cubic filter (a = -0.5 for resizing; PIL's geometric
	// transforms use a = -1, and so do Rotate/Shear/Translate here).
	Bicubic
	// RandomInterp picks Bilinear or Bicubic with equal probability at each
	// call (timm's "random").
	RandomInterp
)

// String returns the timm name of the filter.
func (i Interp) String() string {
	switch i {
	case Bilinear:
		return "bilinear"
	case Bicubic:
		return "bicubic"
	case RandomInterp:
		return "random"
	}
	return fmt.Sprintf("Interp(%d)", int(i))
}

// ParseInterp parses "bilinear", "bicubic" or "random".
func ParseInterp(s string) (Interp, error) {
	switch s {
	case "bilinear":
		return Bilinear, nil
	case "bicubic":
		return Bicubic, nil
	case "random":
		return RandomInterp, nil
	}
	return 0, fmt.Errorf("augment: unknown interpolation %q (want bilinear, bicubic or random)", s)
}

// MarshalText writes the filter's timm name, as String does.
func (i Interp) MarshalText() ([]byte, error) {
	switch i {
	case Bilinear, Bicubic, RandomInterp:
		return []byte(i.String()), nil
	}
	return nil, fmt.Errorf("augment: unknown interpolation %d", int(i))
}

// UnmarshalText reads a timm name, as ParseInterp does.
func (i *Interp) UnmarshalText(b []byte) error {
	v, err := ParseInterp(string(b))
	if err != nil {
		return err
	}
	*i = v
	return nil
}

// pick resolves RandomInterp with one draw from rng.
func (i Interp) pick(rng *rand.Rand) Interp {
	if i == RandomInterp {
		if rng.IntN(2) == 0 {
			return Bilinear
		}
		return Bicubic
	}
	return i
}
