package study

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
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

// Diff is the difference of two arms' means with its standard error and
// the degrees of freedom of its t statistic: paired over seeds when both
// arms have the same seeds (n − 1 degrees of freedom for n seeds), else
// Welch's (Welch–Satterthwaite degrees of freedom).
type Diff struct {
	D, SE  float64
	Paired bool
	N      int
	// DF is the degrees of freedom of T; NaN without a standard error.
	DF float64
}

// Compare is mean(a) − mean(b) with its standard error; seedsA and seedsB
// are the seeds of a's and b's values.
func Compare(seedsA []int, a []float64, seedsB []int, b []float64) Diff {
	d := Diff{D: Mean(a) - Mean(b), SE: math.NaN(), DF: math.NaN()}
	if slices.Equal(seedsA, seedsB) && len(a) == len(b) {
		deltas := make([]float64, len(a))
		for i := range a {
			deltas[i] = a[i] - b[i]
		}
		s := Summarize(deltas)
		d.Paired, d.N = true, s.N
		if s.N > 1 {
			d.SE, d.DF = s.Std/math.Sqrt(float64(s.N)), float64(s.N-1)
		}
		return d
	}
	sa, sb := Summarize(a), Summarize(b)
	d.N = min(sa.N, sb.N)
	if sa.N > 1 && sb.N > 1 {
		va, vb := sa.Std*sa.Std/float64(sa.N), sb.Std*sb.Std/float64(sb.N)
		d.SE = math.Sqrt(va + vb)
		d.DF = (va + vb) * (va + vb) / (va*va/float64(sa.N-1) + vb*vb/float64(sb.N-1))
	}
	return d
}

// Level is the confidence level of the verdicts' two-sided t test.
const Level = 0.95

// T is the difference over its standard error (NaN without one, or when
// the difference and its standard error are both 0; ±Inf for a difference
// with no spread).
func (d Diff) T() float64 { return d.D / d.SE }

// P is the two-sided p-value of T under Student's t with DF degrees of
// freedom: the chance of a |t| at least as large when the arms do not
// differ (NaN without a standard error).
func (d Diff) P() float64 {
	t := d.T()
	switch {
	case math.IsNaN(t):
		return math.NaN()
	case math.IsInf(t, 0):
		return 0
	case !(d.DF > 0):
		return math.NaN()
	}
	return 2 * studentsT(d.DF).Survival(math.Abs(t))
}

// Critical is the |t| a difference must exceed to be resolved: Student's t
// quantile at 1 − (1 − Level)/2 for df degrees of freedom (4.30 for 2, 2.57
// for 5); NaN unless df is positive.
func Critical(df float64) float64 {
	if !(df > 0) {
		return math.NaN()
	}
	return studentsT(df).Quantile(1 - (1-Level)/2)
}

func studentsT(df float64) distuv.StudentsT { return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df} }

// Sign is the direction the seeds resolve the difference in: +1 when it is
// positive and resolved (|T| above Critical(DF); a difference with no
// spread, the same on every seed, when it is positive), −1 when it is
// negative and resolved (with no spread: not positive), 0 when the seeds do
// not resolve it (one seed included), it is not measured, or DF is not
// positive.
func (d Diff) Sign() int {
	switch {
	case math.IsNaN(d.D) || math.IsNaN(d.SE):
		return 0
	case d.SE == 0 && d.D > 0:
		return 1
	case d.SE == 0:
		return -1
	}
	switch c := Critical(d.DF); {
	case math.IsNaN(c):
		return 0
	case d.T() > c:
		return 1
	case d.T() < -c:
		return -1
	}
	return 0
}

// Resolved says whether the seeds resolve the difference (Sign is not 0).
func (d Diff) Resolved() bool { return d.Sign() != 0 }

func (d Diff) String() string {
	if math.IsNaN(d.D) {
		return "not measured"
	}
	s := fmt.Sprintf("Δ %+.2f points", d.D)
	if math.IsNaN(d.SE) {
		return s + ", one seed: no error estimate"
	}
	kind := "unpaired, Welch's t"
	if d.Paired {
		kind = "paired over " + Plural(d.N, "seed")
	}
	if d.SE == 0 {
		return s + fmt.Sprintf(", the same on every seed (%s): no spread", kind)
	}
	s += fmt.Sprintf(", standard error %.2f (%s); t = %.2f on %s degrees of freedom, two-sided p = %s", d.SE, kind, d.T(), dfText(d.DF), pText(d.P()))
	if d.Resolved() {
		return s + fmt.Sprintf(": resolved (|t| > %.2f)", Critical(d.DF))
	}
	return s + fmt.Sprintf(": not resolved (|t| ≤ %.2f)", Critical(d.DF))
}

// dfText writes degrees of freedom: whole for paired seeds, one decimal
// for Welch's.
func dfText(df float64) string {
	if df == math.Trunc(df) {
		return fmt.Sprintf("%.0f", df)
	}
	return fmt.Sprintf("%.1f", df)
}

// pText writes a p-value with three decimals ("< 0.001" below).
func pText(p float64) string {
	if p < 0.001 {
		return "< 0.001"
	}
	return fmt.Sprintf("%.3f", p)
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

// VerdictRule says in sentences how Verdict decides, for a report whose
// arms have the given number of seeds (the critical value it quotes).
func VerdictRule(seeds int) string {
	s := fmt.Sprintf("Each difference is tested with Student's t, two-sided at %.0f%%: t is the difference over its standard error, "+
		"on n − 1 degrees of freedom for n paired seeds (Welch's degrees of freedom when the arms' seeds differ), "+
		"and the seeds resolve the difference when |t| exceeds the two-sided critical value (p < %.2f)", 100*Level, 1-Level)
	if seeds > 1 {
		s += fmt.Sprintf(", %.2f for %s", Critical(float64(seeds-1)), Plural(seeds, "paired seed"))
	}
	return s + ". A claim holds when each difference it rests on is positive and resolved, does not hold when one is negative and resolved " +
		"(or not positive on every seed alike), and is not resolved otherwise (one seed gives no standard error). " +
		"The test assumes the number of seeds was fixed before the runs; seeds added after reading the verdicts make its p-values too small."
}

// Verdict judges a claim that one arm beats each of the others from the
// differences one − other (see Diff.Sign): Holds when every difference is
// positive and resolved, DoesNotHold when some difference is negative and
// resolved (the seeds contradict the claim), NotMeasured when a
// difference is missing, and NotResolved otherwise, a single seed (no
// standard error) included.
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
		switch d.Sign() {
		case -1:
			return DoesNotHold
		case 0:
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
