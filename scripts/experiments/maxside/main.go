// Command maxside writes the table of the --max-side study: what storing
// each image with its longer side at most N (vit-train prepare --max-side)
// costs in test accuracy against storing it at full size. run.sh trains
// the arms; this command reads their scores and compares each N with full
// size, paired by seed, with the study package's Student's t.
//
//	scripts/experiments/maxside/run.sh PHOTOS WORK vit-train
//	go run ./scripts/experiments/maxside WORK/runs
//
// A run folder is named nN-sSEED (N 0: full size) and holds the test
// split's score in eval_test/eval.json, as vit-train eval writes it.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
)

// arm is one stored size's test top-1 (percent) per seed, in the order of
// seeds.
type arm struct {
	maxSide int
	seeds   []int
	top1    []float64
}

// runName is a run folder's name: the arm's max side and the seed.
var runName = regexp.MustCompile(`^n(\d+)-s(\d+)$`)

// readArms reads every finished run under dir (eval_test/eval.json) into
// arms sorted with full size (0) first, then by decreasing N; seeds are
// sorted within an arm. Unfinished runs (no eval.json) are left out.
func readArms(dir string) ([]arm, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	byN := map[int]*arm{}
	for _, e := range entries {
		m := runName.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		seed, _ := strconv.Atoi(m[2])
		path := filepath.Join(dir, e.Name(), "eval_test", "eval.json")
		top1, err := readTop1(path)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		a := byN[n]
		if a == nil {
			a = &arm{maxSide: n}
			byN[n] = a
		}
		a.seeds = append(a.seeds, seed)
		a.top1 = append(a.top1, top1)
	}
	var arms []arm
	for _, a := range byN {
		idx := make([]int, len(a.seeds))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(i, j int) int { return a.seeds[i] - a.seeds[j] })
		s := arm{maxSide: a.maxSide}
		for _, i := range idx {
			s.seeds = append(s.seeds, a.seeds[i])
			s.top1 = append(s.top1, a.top1[i])
		}
		arms = append(arms, s)
	}
	slices.SortFunc(arms, func(a, b arm) int { return sortKey(a.maxSide) - sortKey(b.maxSide) })
	return arms, nil
}

// sortKey puts full size (0) first, then larger sides first.
func sortKey(maxSide int) int {
	if maxSide == 0 {
		return -1 << 30
	}
	return -maxSide
}

// readTop1 reads the top-1 accuracy (percent) of an eval.json.
func readTop1(path string) (float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var e struct {
		Top1 *float64 `json:"top1"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if e.Top1 == nil {
		return 0, fmt.Errorf("%s: no field top1", path)
	}
	return *e.Top1, nil
}

// sideName names an arm's stored size.
func sideName(maxSide int) string {
	if maxSide == 0 {
		return "full size (0)"
	}
	return strconv.Itoa(maxSide)
}

// writeTable writes the Markdown table: each arm's seeds, top-1 per seed
// and mean ± std, and its difference from full size (arm − full) paired by
// seed, on the seeds both ran, with its standard error ("±" is kept for
// the standard deviation), with t, p and the verdict of the claim
// "full size beats N".
func writeTable(w io.Writer, arms []arm) error {
	if len(arms) == 0 || arms[0].maxSide != 0 {
		return fmt.Errorf("no finished full-size (n0-s*) runs to compare with")
	}
	full := arms[0]
	fmt.Fprintln(w, "| --max-side | seeds | test top-1 per seed (%) | mean ± std | arm − full size (points; standard error) | t | p | full size beats N |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, a := range arms {
		per := make([]string, len(a.top1))
		for i, v := range a.top1 {
			per[i] = fmt.Sprintf("%.2f", v)
		}
		diff, t, p, verdict := "", "", "", ""
		if a.maxSide != 0 {
			seeds, x, f := commonSeeds(a, full)
			d := study.Compare(seeds, x, seeds, f)
			diff = fmt.Sprintf("%+.2f (SE %.2f)", d.D, d.SE)
			if len(seeds) < len(a.seeds) || len(seeds) < len(full.seeds) {
				diff += fmt.Sprintf(" (seeds %s)", joinInts(seeds))
			}
			t, p = study.Num(d.T()), study.Num(d.P())
			verdict = study.Verdict(study.Compare(seeds, f, seeds, x))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", sideName(a.maxSide), joinInts(a.seeds), strings.Join(per, ", "),
			study.PM(study.Summarize(a.top1)), diff, t, p, verdict)
	}
	seeds := len(full.seeds)
	_, err := fmt.Fprintf(w, "\n%s\n", study.VerdictRule(seeds))
	return err
}

// commonSeeds are the seeds that both a and full ran, in order, with a's
// and full's top-1 on them: the differences pair by seed.
func commonSeeds(a, full arm) (seeds []int, x, f []float64) {
	for i, s := range a.seeds {
		if j := slices.Index(full.seeds, s); j >= 0 {
			seeds = append(seeds, s)
			x = append(x, a.top1[i])
			f = append(f, full.top1[j])
		}
	}
	return seeds, x, f
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/experiments/maxside RUNS")
		os.Exit(2)
	}
	arms, err := readArms(os.Args[1])
	if err == nil {
		err = writeTable(os.Stdout, arms)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "maxside:", err)
		os.Exit(1)
	}
}
