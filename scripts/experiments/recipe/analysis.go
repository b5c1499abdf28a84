package main

import (
	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
)

// seedResults are one candidate's finished seeds on one split: the
// held-out images, or the test set.
type seedResults struct {
	Cand  candidate
	Seeds []int
	// Top1 is each seed's top-1 (%) on the split; CPUS and WallS its
	// vit-train train processes' CPU and wall-clock seconds, TimesAtLeast
	// set when some are lower bounds (a first process went unrecorded).
	Top1, CPUS, WallS []float64
	TimesAtLeast      bool
}

// collectSeeds reads the finished seeds of c's runs, whose IDs runID
// gives.
func collectSeeds(o options, res *study.Results, c candidate, runID func(candidate, int) string) seedResults {
	s := seedResults{Cand: c}
	for seed := 0; seed < o.seeds; seed++ {
		rr, ok := res.Runs[runID(c, seed)]
		if !ok {
			continue
		}
		s.Seeds = append(s.Seeds, seed)
		s.Top1 = append(s.Top1, rr.Eval.Top1)
		s.CPUS, s.WallS = append(s.CPUS, rr.Done.CPUS), append(s.WallS, rr.Done.WallS)
		s.TimesAtLeast = s.TimesAtLeast || rr.Done.StartUnrecorded()
	}
	return s
}

// heldOutResults are every candidate's held-out runs, in candidates'
// order.
func heldOutResults(o options, res *study.Results) []seedResults {
	out := make([]seedResults, len(candidates))
	for i, c := range candidates {
		out[i] = collectSeeds(o, res, c, heldOutRunID)
	}
	return out
}

// choose returns the index of the candidate with the highest mean
// held-out top-1 (the earlier of equal means), once every candidate has
// its planned seeds; ok is false before.
func choose(held []seedResults, planned int) (best int, ok bool) {
	best = -1
	for i, s := range held {
		if len(s.Seeds) != planned {
			return -1, false
		}
		if m := study.Mean(s.Top1); best < 0 || m > study.Mean(held[best].Top1) {
			best = i
		}
	}
	return best, best >= 0
}

// comparison is the chosen candidate against another on the held-out
// images: the difference chosen − other over the paired seeds, and the
// verdict on "the chosen recipe beats the other".
type comparison struct {
	Other   candidate
	Diff    study.Diff
	Verdict string
}

// report is everything the study writes.
type report struct {
	Opts    options
	HeldOut []seedResults
	// Chosen is the index in candidates of the recipe the held-out images
	// chose; -1 until every held-out run has finished.
	Chosen      int
	Comparisons []comparison
	// Test are the chosen recipe's runs on the whole training set, scored
	// on the test set.
	Test     seedResults
	Checks   []study.Check
	Estimate *study.Estimate
	Tally    study.Tally
	Plan     *study.Plan
}

// analyse turns the finished runs of p into the report's numbers, choice
// and verdicts.
func analyse(o options, p *study.Plan, res *study.Results) *report {
	rep := &report{Opts: o, Tally: study.NewTally(p, res), Plan: p, HeldOut: heldOutResults(o, res), Chosen: -1}
	rep.Checks = []study.Check{study.ConsistencyCheck(p, res)}
	best, ok := choose(rep.HeldOut, o.seeds)
	if !ok {
		return rep
	}
	rep.Chosen = best
	b := rep.HeldOut[best]
	for i, s := range rep.HeldOut {
		if i == best {
			continue
		}
		d := study.Compare(b.Seeds, b.Top1, s.Seeds, s.Top1)
		rep.Comparisons = append(rep.Comparisons, comparison{Other: s.Cand, Diff: d, Verdict: study.Verdict(d)})
	}
	rep.Test = collectSeeds(o, res, b.Cand, testRunID)
	return rep
}

// changed says whether the chosen recipe is another than the yaml's.
func (r *report) changed() bool { return r.Chosen >= 0 && candidates[r.Chosen].Key != yamlKey }
