package augment

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxLayers bounds the n section of a RandAugment spec.
const maxLayers = 64

// AugHParams are the settings timm's create_transform passes to its
// auto-augment policies.
type AugHParams struct {
	Interp       Interp    // filter of geometric ops (timm: the pipeline's interpolation)
	Fill         []float32 // per-channel fill, [0, 1] (timm: round(255*mean)/255)
	TranslatePct float64   // 0 means timm's 0.45
}

// ParseRandAugment builds a RandAugment from a timm config string: "rand"
// followed by dash-separated sections, each a key and a number:
//
//	m<int>     magnitude (default 10)
//	n<int>     operations per image (default 2)
//	mstd<f>    magnitude noise std; > 100 means uniform in [0, m] (default 0)
//	mmax<int>  magnitude upper clip (default 10)
//	inc<0|1>   1 uses the "Increasing" op list (default 0)
//	w<int>     op choice weights index; only 0 exists (default: uniform)
//
// For example "rand-m9-mstd0.5-inc1" (DeiT) is magnitude 9, noise 0.5, two
// ops from the increasing list, each applied with probability 0.5.
// Unknown keys, sections without a number and malformed numbers are errors
// (timm skips sections without a number).
func ParseRandAugment(spec string, hp AugHParams) (*RandAugment, error) {
	parts := strings.Split(spec, "-")
	if parts[0] != "rand" {
		return nil, fmt.Errorf("augment: RandAugment spec %q: must start with \"rand\"", spec)
	}
	ra := &RandAugment{
		NumLayers: 2, Magnitude: 10, MagnitudeMax: 10, Prob: 0.5,
		TranslatePct: hp.TranslatePct, Interp: hp.Interp, Fill: hp.Fill,
	}
	increasing, weightIdx := false, -1
	for _, sec := range parts[1:] {
		key, val, err := splitSection(sec)
		if err != nil {
			return nil, fmt.Errorf("augment: RandAugment spec %q: %w", spec, err)
		}
		bad := func(what string) error {
			return fmt.Errorf("augment: RandAugment spec %q: section %q: %s", spec, sec, what)
		}
		switch key {
		case "m", "n", "mmax", "inc", "w":
			v, err := strconv.Atoi(val)
			if err != nil || v < 0 {
				return nil, bad("value must be a non-negative integer")
			}
			switch key {
			case "m":
				ra.Magnitude = float64(v)
			case "n":
				if v > maxLayers {
					return nil, bad(fmt.Sprintf("at most %d operations per image", maxLayers))
				}
				ra.NumLayers = v
			case "mmax":
				ra.MagnitudeMax = float64(v)
			case "inc":
				if v > 1 {
					return nil, bad("value must be 0 or 1")
				}
				increasing = v == 1
			case "w":
				if v != 0 {
					return nil, bad("only weight set 0 exists")
				}
				weightIdx = v
			}
		case "mstd":
			v, err := strconv.ParseFloat(val, 64)
			if err != nil || v < 0 || math.IsNaN(v) {
				return nil, bad("value must be a non-negative number")
			}
			if v > 100 {
				v = math.Inf(1)
			}
			ra.MagnitudeStd = v
		default:
			return nil, bad("unknown key (want m, n, mstd, mmax, inc or w)")
		}
	}
	ra.Ops = RandOps(increasing)
	if weightIdx == 0 {
		ra.Weights = randWeights0
	}
	return ra, nil
}

// splitSection splits "mstd0.5" into ("mstd", "0.5") at the first digit, as
// timm's re.split(r'(\d.*)') does.
func splitSection(sec string) (key, val string, err error) {
	i := strings.IndexAny(sec, "0123456789")
	if i <= 0 {
		if sec == "" {
			return "", "", fmt.Errorf("empty section")
		}
		return "", "", fmt.Errorf("section %q is not a key followed by a number", sec)
	}
	return sec[:i], sec[i:], nil
}
