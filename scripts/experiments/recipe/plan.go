package main

import (
	"embed"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vit-train/vit-train/scripts/experiments/internal/study"
)

// configFiles is the study's recipe, written into the work folder:
// recipe.yaml, configs/fashion_mnist_full.yaml's recipe.
//
//go:embed configs/*.yaml
var configFiles embed.FS

// recipeFile is the name of the study's recipe in configFiles.
const recipeFile = "recipe.yaml"

// The held-out split of every candidate run: data.val_split's fraction of
// the 60,000 training images, drawn by data.val_seed (the same images for
// every seed and candidate, so that the candidates are scored on one set).
const (
	valSplit = 0.1
	valSeed  = 1
)

// candidate is one recipe of configs/fashion_mnist_full.yaml's sweep: the
// yaml's recipe with another peak learning rate and batch size.
type candidate struct {
	Key   string // folder name
	LR    float64
	Batch int
}

// Label names the candidate in the report, its learning rate as the
// yaml header's sweep writes it ("lr 5e-3, batch 64").
func (c candidate) Label() string {
	lr := strings.Replace(strconv.FormatFloat(c.LR, 'e', -1, 64), "e-0", "e-", 1)
	return fmt.Sprintf("lr %s, batch %d", lr, c.Batch)
}

// candidates are the recipes the held-out data choose from, in the
// order of the yaml header's sweep: the sweep's recipes that differ from
// the yaml's only in learning rate and batch size.
var candidates = []candidate{
	{Key: "lr2e-3_batch128", LR: 2e-3, Batch: 128},
	{Key: "lr3e-3_batch64", LR: 3e-3, Batch: 64},
	{Key: "lr5e-3_batch64", LR: 5e-3, Batch: 64},
	{Key: "lr8e-3_batch64", LR: 8e-3, Batch: 64},
}

// yamlKey is the candidate that is configs/fashion_mnist_full.yaml's
// recipe (recipeFile's lr and batch size).
const yamlKey = "lr5e-3_batch64"

// candidateByKey returns the candidate of key.
func candidateByKey(key string) candidate {
	for _, c := range candidates {
		if c.Key == key {
			return c
		}
	}
	panic("no candidate " + key)
}

// heldOutRunID is the run ID of a candidate's seed trained on the
// training set less the held-out images and scored on them.
func heldOutRunID(c candidate, seed int) string {
	return fmt.Sprintf("heldout/%s/seed%d", c.Key, seed)
}

// testRunID is the run ID of a candidate's seed trained on the whole
// training set and scored on the test set: the chosen recipe's only.
func testRunID(c candidate, seed int) string {
	return fmt.Sprintf("test/%s/seed%d", c.Key, seed)
}

// newPlan is the study's runs in the order they run: for each seed every
// candidate on the held-out split (so that a stopped study has whole
// seeds) then, when chosen is not nil, the chosen candidate's seeds on the
// whole training set. The choice reads the held-out runs, so a study plans
// twice: without chosen, then with it.
func newPlan(o options, cfgDir string, chosen *candidate) *study.Plan {
	p := study.NewPlan()
	p.Seeds = o.seeds
	m := study.NewRunMaker(o.Common)
	args := func(c candidate, extra ...string) []string {
		a := []string{"train", "--config", filepath.Join(cfgDir, recipeFile),
			"--set", "optim.lr=" + study.FmtFloat(c.LR), "--set", "data.batch_size=" + strconv.Itoa(c.Batch)}
		return append(append(a, extra...), "--set", "progress=false")
	}
	const size = 28
	for seed := 0; seed < o.seeds; seed++ {
		for _, c := range candidates {
			r := m.New(heldOutRunID(c, seed), seed, o.epochs, size, args(c,
				"--set", "data.val_split="+study.FmtFloat(valSplit), "--set", "data.val_seed="+strconv.Itoa(valSeed))...)
			r.Arm = c.Key
			p.Add(r)
		}
	}
	if chosen != nil {
		for seed := 0; seed < o.seeds; seed++ {
			r := m.New(testRunID(*chosen, seed), seed, o.epochs, size, args(*chosen)...)
			r.Arm = testArm + chosen.Key
			p.Add(r)
		}
	}
	return p
}

// testArm prefixes the arm of a candidate's runs on the whole training
// set (study.Run.Arm), which its held-out runs have without it.
const testArm = "test/"

// kindLabel names a kind of run in the time estimate.
func kindLabel(r study.Run) string {
	key, test := strings.CutPrefix(r.Arm, testArm)
	if test {
		return candidateByKey(key).Label() + ", whole training set, scored on the test set"
	}
	return candidateByKey(key).Label() + ", scored on the held-out images"
}
