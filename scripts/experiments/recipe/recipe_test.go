package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "github.com/vit-train/vit-train/model/vit" // registers the ViT presets the recipe names
	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
	"github.com/vit-train/vit-train/scripts/experiments/internal/studytest"
	"github.com/vit-train/vit-train/train"
	"gopkg.in/yaml.v3"
)

func testOptions(t *testing.T, seeds int) options {
	o := defaults()
	o.seeds = seeds
	o.Work = t.TempDir()
	o.Data = "/data"
	return o
}

// The study's recipe is configs/fashion_mnist_full.yaml's, and its
// candidate yamlKey is that file's learning rate and batch size.
func TestRecipeIsFashionMNISTFulls(t *testing.T) {
	values := func(b []byte) map[string]any {
		var v map[string]any
		if err := yaml.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	ours, err := configFiles.ReadFile("configs/" + recipeFile)
	if err != nil {
		t.Fatal(err)
	}
	main, err := os.ReadFile(filepath.Join(studytest.ChdirRoot(t), "configs", "fashion_mnist_full.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := values(ours), values(main); !reflect.DeepEqual(a, b) {
		t.Errorf("configs/%s is not configs/fashion_mnist_full.yaml's recipe:\n%v\n%v", recipeFile, a, b)
	}
	cfg, err := train.DefaultConfig().Layer(filepath.Join("configs", "fashion_mnist_full.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if y := candidateByKey(yamlKey); cfg.Optim.LR != y.LR || cfg.Data.BatchSize != y.Batch {
		t.Errorf("the yaml trains at lr %g batch %d; candidate %s is %s", cfg.Optim.LR, cfg.Data.BatchSize, yamlKey, y.Label())
	}
}

// Every candidate trains each seed on the held-out split; the chosen one
// trains the same seeds on the whole training set; vit-train accepts every
// run's settings, which differ from the yaml's only as planned.
func TestPlan(t *testing.T) {
	o := testOptions(t, 3)
	cfgDir := filepath.Join(o.Work, "configs")
	if err := study.WriteConfigs(cfgDir, configFiles, false); err != nil {
		t.Fatal(err)
	}
	held := newPlan(o, cfgDir, nil)
	if len(held.Runs) != 3*len(candidates) || held.Seeds != 3 {
		t.Fatalf("%d held-out runs for %d seeds", len(held.Runs), held.Seeds)
	}
	chosen := candidates[1]
	p := newPlan(o, cfgDir, &chosen)
	if len(p.Runs) != 3*len(candidates)+3 {
		t.Fatalf("%d runs with the chosen recipe's test runs", len(p.Runs))
	}
	yaml, err := train.DefaultConfig().Layer(filepath.Join(cfgDir, recipeFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range p.Runs {
		var sets []string
		for j := 0; j+1 < len(r.Args); j++ {
			if r.Args[j] == "--set" {
				sets = append(sets, r.Args[j+1])
			}
		}
		cfg, err := train.DefaultConfig().Layer(filepath.Join(cfgDir, recipeFile), sets)
		if err == nil {
			err = cfg.Validate()
		}
		if err != nil {
			t.Fatalf("%s: %v", r.ID, err)
		}
		// Seed by seed, every candidate on the held-out split, then the
		// chosen one's seeds.
		c, split, want := candidates[i%len(candidates)], valSplit, heldOutRunID(candidates[i%len(candidates)], i/len(candidates))
		if i >= 3*len(candidates) {
			c, split, want = chosen, 0, testRunID(chosen, i-3*len(candidates))
		}
		if r.ID != want || r.Seed != int(cfg.Seed) {
			t.Errorf("run %d is %s of seed %d, want %s", i, r.ID, cfg.Seed, want)
		}
		if cfg.Optim.LR != c.LR || cfg.Data.BatchSize != c.Batch || cfg.Data.ValSplit != split || split > 0 && cfg.Data.ValSeed != valSeed ||
			cfg.Epochs != o.epochs || cfg.Seed != uint64(r.Seed) || cfg.Progress {
			t.Errorf("%s: lr %g batch %d val_split %g val_seed %d epochs %d seed %d", r.ID, cfg.Optim.LR, cfg.Data.BatchSize, cfg.Data.ValSplit, cfg.Data.ValSeed, cfg.Epochs, cfg.Seed)
		}
		// Nothing else differs from the yaml.
		cfg.Optim.LR, cfg.Data.BatchSize, cfg.Data.ValSplit, cfg.Data.ValSeed = yaml.Optim.LR, yaml.Data.BatchSize, yaml.Data.ValSplit, yaml.Data.ValSeed
		cfg.Epochs, cfg.Seed, cfg.Progress, cfg.Data.Root = yaml.Epochs, yaml.Seed, yaml.Progress, yaml.Data.Root
		if !reflect.DeepEqual(cfg, yaml) {
			t.Errorf("%s: settings other than lr, batch, split, epochs and seed differ from the yaml's", r.ID)
		}
	}
}

// seedsOf is a candidate's results with the given per-seed top-1.
func seedsOf(c candidate, top1 ...float64) seedResults {
	s := seedResults{Cand: c, Top1: top1}
	for i := range top1 {
		s.Seeds = append(s.Seeds, i)
	}
	return s
}

// The choice is the best mean held-out top-1 over every planned seed: not
// the best single seed, not the first or the yaml's, and none before every
// candidate has its seeds.
func TestChooseTakesTheBestMean(t *testing.T) {
	a, b, c := candidates[0], candidates[1], candidates[2]
	for _, tc := range []struct {
		name   string
		held   []seedResults
		best   int
		chosen bool
	}{
		{"the best mean, not the best seed", []seedResults{seedsOf(a, 90, 80, 80), seedsOf(b, 85, 85, 85), seedsOf(c, 84, 84, 84)}, 1, true},
		{"the last is best", []seedResults{seedsOf(a, 80, 80, 80), seedsOf(b, 81, 81, 81), seedsOf(c, 82, 82, 81.5)}, 2, true},
		{"the earlier of equal means", []seedResults{seedsOf(a, 80, 80, 80), seedsOf(b, 81, 82, 83), seedsOf(c, 83, 82, 81)}, 1, true},
		{"a candidate lacks a seed", []seedResults{seedsOf(a, 80, 80, 80), seedsOf(b, 81, 81), seedsOf(c, 82, 82, 82)}, -1, false},
	} {
		best, ok := choose(tc.held, 3)
		if best != tc.best || ok != tc.chosen {
			t.Errorf("%s: choose = %d, %v; want %d, %v", tc.name, best, ok, tc.best, tc.chosen)
		}
	}
}

// fixtureCorrect makes the candidate best the best on every seed of the
// fixture, by 2 and 4 of its 200 images, the others apart by their
// position and seed.
func fixtureCorrect(best string) studytest.Correct {
	return func(r study.Run) int {
		key, _ := strings.CutPrefix(r.Arm, testArm)
		if key == best {
			return 170 + r.Seed
		}
		for i, c := range candidates {
			if c.Key == key {
				return 160 - 2*i + r.Seed*r.Seed%3
			}
		}
		panic("no candidate " + key)
	}
}

// analyseFixture is the report of o from a fixture of finished runs in
// which the candidate best wins.
func analyseFixture(t *testing.T, o options, best string) *report {
	t.Helper()
	c := candidateByKey(best)
	res := studytest.Finished(t, func(work string) *study.Plan {
		of := o
		of.Work = work
		return newPlan(of, filepath.Join(work, "configs"), &c)
	}, fixtureCorrect(best))
	return analyse(o, newPlan(o, filepath.Join(o.Work, "configs"), &c), res)
}

// The report chooses the best candidate on the held-out images, compares it
// with each other candidate, reports its test runs, and says whether the
// recipe changed.
func TestAnalyseChoosesAndSaysWhetherTheRecipeChanged(t *testing.T) {
	o := testOptions(t, 3)
	for _, best := range []string{yamlKey, candidates[0].Key} {
		rep := analyseFixture(t, o, best)
		if rep.Chosen < 0 || candidates[rep.Chosen].Key != best {
			t.Fatalf("chose %d, want %s", rep.Chosen, best)
		}
		if len(rep.Comparisons) != len(candidates)-1 {
			t.Fatalf("%d comparisons", len(rep.Comparisons))
		}
		for _, c := range rep.Comparisons {
			// Ahead by at least 10 images of 200 on every seed, a spread
			// of at most 1.5 points: resolved.
			if c.Other.Key == best || c.Verdict != study.Holds || !(c.Diff.D >= 5) || !c.Diff.Paired {
				t.Errorf("%s against %s: %s, %s", best, c.Other.Key, c.Verdict, c.Diff)
			}
		}
		if len(rep.Test.Seeds) != 3 || rep.Test.Cand.Key != best || study.Mean(rep.Test.Top1) != 100*171.0/200 {
			t.Errorf("test runs: %+v", rep.Test)
		}
		md := rep.Markdown()
		want, other := "**the recipe did not change**", "**the recipe changed**"
		if best != yamlKey {
			want, other = other, want
		}
		if !strings.Contains(md, want) || strings.Contains(md, other) {
			t.Errorf("chosen %s: the report does not say %s", best, want)
		}
		if resolved := "Its lead over the yaml's recipe is resolved"; best != yamlKey && !strings.Contains(md, resolved) {
			t.Errorf("chosen %s: the report does not say %q", best, resolved)
		}
		if fail := rep.FailedChecks(); len(fail) > 0 || len(rep.Missing()) > 0 {
			t.Errorf("checks %v, missing %v", fail, rep.Missing())
		}
	}
}

// A changed recipe whose lead over the yaml's the seeds do not resolve is
// reported as changed, and as not told apart from the yaml's.
func TestChoiceTextSaysWhenTheLeadIsNotResolved(t *testing.T) {
	y := candidateByKey(yamlKey)
	rep := &report{Chosen: 1, HeldOut: []seedResults{seedsOf(candidates[0], 80), seedsOf(candidates[1], 88), seedsOf(y, 87.9)},
		Comparisons: []comparison{{Other: candidates[0], Verdict: study.Holds}, {Other: y, Verdict: study.NotResolved}}}
	got := rep.choiceText()
	for _, want := range []string{"chose **" + candidates[1].Label() + "**", "**the recipe changed**", "Its lead over the yaml's recipe is not resolved"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}
