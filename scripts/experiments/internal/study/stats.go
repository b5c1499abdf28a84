package study

import (
	"fmt"
	"math"
	"slices"
)

// Stats are a sample's mean and standard deviation (n−1; NaN for one value).
type Stats struct {
	Mean, Std float64
	N         int
}

// Summarize is the Stats of xs, NaNs left out.
func Summarize(xs []float64) Stats {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	s := Stats{Mean: math.NaN(), Std: math.NaN(), N: len(v)}
	if len(v) == 0 {
		return s
	}
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	s.Mean = sum / float64(len(v))
	if len(v) > 1 {
		ss := 0.0
		for _, x := range v {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.Std = math.Sqrt(ss / float64(len(v)-1))
	}
	return s
}

// Mean is the mean of xs, NaNs left out.
func Mean(xs []float64) float64 { return Summarize(xs).Mean }

// Diff is the difference of two arms' means with its standard error:
// paired over seeds when both arms have the same seeds, else Welch's.
type Diff struct {
	D, SE  float64
	Paired bool
	N      int
}

// Compare is mean(a) − mean(b) with its standard error; seedsA and seedsB
// are the seeds of a's and b's values.
func Compare(seedsA []int, a []float64, seedsB []int, b []float64) Diff {
	d := Diff{D: Mean(a) - Mean(b), SE: math.NaN()}
	if slices.Equal(seedsA, seedsB) && len(a) == len(b) {
		deltas := make([]float64, len(a))
		for i := range a {
			deltas[i] = a[i] - b[i]
		}
		s := Summarize(deltas)
		d.Paired, d.N = true, s.N
		if s.N > 1 {
			d.SE = s.Std / math.Sqrt(float64(s.N))
		}
		return d
	}
	sa, sb := Summarize(a), Summarize(b)
	d.N = min(sa.N, sb.N)
	if sa.N > 1 && sb.N > 1 {
		d.SE = math.Sqrt(sa.Std*sa.Std/float64(sa.N) + sb.Std*sb.Std/float64(sb.N))
	}
	return d
}

// Resolved says whether the difference exceeds twice its standard error.
func (d Diff) Resolved() bool { return !math.IsNaN(d.SE) && math.Abs(d.D) > 2*d.SE }

func (d Diff) String() string {
	if math.IsNaN(d.D) {
		return "not measured"
	}
	s := fmt.Sprintf("Δ %+.2f points", d.D)
	switch {
	case math.IsNaN(d.SE):
		return s + ", one seed: no error estimate"
	}
	kind := "unpaired"
	if d.Paired {
		kind = "paired over seeds"
	}
	if d.Resolved() {
		return s + fmt.Sprintf(", standard error %.2f (%s): more than 2 SE", d.SE, kind)
	}
	return s + fmt.Sprintf(", standard error %.2f (%s): within 2 SE, not resolved by %d seeds", d.SE, kind, d.N)
}

// PM writes mean ± std in percent ("–" when not measured).
func PM(s Stats) string {
	switch {
	case s.N == 0 || math.IsNaN(s.Mean):
		return "–"
	case s.N == 1 || math.IsNaN(s.Std):
		return fmt.Sprintf("%.2f", s.Mean)
	}
	return fmt.Sprintf("%.2f ± %.2f", s.Mean, s.Std)
}

// A claim's verdicts.
const (
	Holds       = "holds"
	DoesNotHold = "does not hold"
	NotResolved = "not resolved"
	NotMeasured = "not measured"
)

// VerdictRule says in a sentence how Verdict decides, for reports.
const VerdictRule = "A claim holds when each difference it rests on is positive by more than twice its standard error, " +
	"does not hold when one is not positive by at least twice its standard error, and is not resolved otherwise " +
	"(one seed gives no standard error)."

// Verdict judges a claim that one arm beats each of the others from the
// differences one − other: Holds when every difference is positive by more
// than twice its standard error, DoesNotHold when some difference is not
// positive by at least twice its standard error (the seeds contradict the
// claim), NotMeasured when a difference is missing, and NotResolved
// otherwise, a single seed (no standard error) included.
func Verdict(diffs ...Diff) string {
	if len(diffs) == 0 {
		return NotMeasured
	}
	for _, d := range diffs {
		if math.IsNaN(d.D) {
			return NotMeasured
		}
	}
	verdict := Holds
	for _, d := range diffs {
		switch {
		case d.D+2*d.SE <= 0:
			return DoesNotHold
		case !(d.D > 2*d.SE):
			verdict = NotResolved
		}
	}
	return verdict
}

// Finding is one of a study's claims with its verdict from the numbers.
type Finding struct {
	Claim   string
	Verdict string // Holds, DoesNotHold or NotMeasured
	Detail  string
}

// Check is a consistency check of the pipeline.
type Check struct {
	Name   string
	OK     bool
	Detail string
}

// FailedChecks lists the checks that failed.
func FailedChecks(checks []Check) []string {
	var out []string
	for _, c := range checks {
		if !c.OK {
			out = append(out, c.Name+": "+c.Detail)
		}
	}
	return out
}
