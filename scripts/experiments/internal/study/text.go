package study

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/vit-train/vit-train/nn/fmapeak"
)

// Plural writes n and the noun, with an s unless n is 1.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// SeedRange names the seeds 0 … n−1.
func SeedRange(n int) string {
	if n == 1 {
		return "seed 0"
	}
	return fmt.Sprintf("seeds 0–%d", n-1)
}

// Num writes v with two decimals ("–" for NaN).
func Num(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.2f", v)
}

// Minutes writes s seconds in s, min or h.
func Minutes(s float64) string {
	switch {
	case math.IsNaN(s):
		return "–"
	case s < 120:
		return fmt.Sprintf("%.0f s", s)
	case s < 7200:
		return fmt.Sprintf("%.1f min", s/60)
	}
	return fmt.Sprintf("%.1f h", s/3600)
}

// ReportName is the base name of a study's report and figures in the
// output folder: a --core run's report has its own, so that it stands
// beside the full study's instead of replacing it.
func ReportName(study string, core bool) string {
	if core {
		return study + "_core"
	}
	return study
}

// AtLeast marks text as a lower bound when lower is set ("≥ 3.2 min").
func AtLeast(text string, lower bool) string {
	if lower {
		return "≥ " + text
	}
	return text
}

// Hours writes s seconds in hours.
func Hours(s float64) string {
	if math.IsNaN(s) {
		return "–"
	}
	return fmt.Sprintf("%.1f h", s/3600)
}

// OrDash is s, or "–" when empty.
func OrDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// CPUModel names the processor as /proc/cpuinfo does, with its family and
// model ("AMD EPYC (family 25 model 17)").
func CPUModel() string {
	p, err := fmapeak.ReadProcessor()
	if err != nil {
		return runtime.GOARCH
	}
	return p.String()
}

// RelArgs writes the paths in args relative to the current folder when
// they are inside it.
func RelArgs(args []string) []string {
	wd, err := os.Getwd()
	if err != nil {
		return args
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, wd+string(filepath.Separator), "")
	}
	return out
}

// RelPath is path relative to the current folder when it is inside it.
func RelPath(path string) string {
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return path
}

// ChecksMarkdown renders a report's "Checks" section: each check with its
// verdict, then the runs left out because they have not finished, and, when
// estimate is not nil, the full study's estimated time (defaults describes
// its default budget).
func ChecksMarkdown(checks []Check, missing []string, estimate *Estimate, defaults string) string {
	var b strings.Builder
	b.WriteString("\n## Checks\n\n")
	for _, c := range checks {
		mark := "passed"
		if !c.OK {
			mark = "**failed**"
		}
		fmt.Fprintf(&b, "- %s: %s (%s).\n", c.Name, mark, c.Detail)
	}
	if len(missing) > 0 {
		fmt.Fprintf(&b, "- Runs not finished (left out of this report): %s.\n", strings.Join(missing, ", "))
	}
	if estimate != nil {
		b.WriteString("\n## Time of the full study, estimated from this run\n\n")
		b.WriteString(estimate.Markdown(defaults))
	}
	return b.String()
}

// SeedCount says how many seeds the arms' numbers average, given each arm's
// finished seeds (seeds reads them): "3 seeds" when every arm finished all
// planned, and, for a study still running, "1–3 of 3 planned seeds per arm".
func SeedCount[A any](planned int, arms []A, seeds func(A) []int) string {
	least, most := planned, 0
	for _, a := range arms {
		n := len(seeds(a))
		least, most = min(least, n), max(most, n)
	}
	if len(arms) == 0 || least == planned {
		return Plural(planned, "seed")
	}
	count := fmt.Sprint(least)
	if most != least {
		count = fmt.Sprintf("%d–%d", least, most)
	}
	return fmt.Sprintf("%s of %s per arm", count, Plural(planned, "planned seed"))
}
