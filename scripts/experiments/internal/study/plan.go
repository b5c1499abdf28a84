package study

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Eval is a vit-train eval of a run's last.safetensors, written into the
// run's folder Name with the extra arguments Args (e.g. --img-size 28).
type Eval struct {
	Name string
	Args []string
}

// NativeEval is the evaluation of a ViT at the size it was trained at.
var NativeEval = Eval{Name: "eval_last"}

// Run is one vit-train training run and the outputs a study needs from it.
type Run struct {
	ID     string // folder under the work folder, e.g. students/hard_cnn/seed0
	Dir    string
	Arm    string // the arm's key; "" for teachers and checks
	Seed   int
	Epochs int
	// Args is the vit-train command that starts the run (train or finetune
	// …); an unfinished run is continued with train --out Dir --resume.
	Args []string
	// Evals are the evaluations run on last.safetensors once trained. The
	// first is the run's top-1; a run without any (a ResNet: vit-train
	// eval reports the two heads of a DeiT) takes its top-1 from the last
	// epoch's evaluation, checked against its test logits.
	Evals []Eval
	// TrainLogits asks for the model's logits over the training split
	// (teacher logits for distill.teacher_logits); the test split's are
	// always written.
	TrainLogits bool
	// ImageSize is the input size; TrainImages and EvalImages the data
	// sizes (for time estimates).
	ImageSize   int
	TrainImages int
	EvalImages  int
}

// Paths of a run's outputs.
func (r Run) Last() string               { return filepath.Join(r.Dir, "last.safetensors") }
func (r Run) EvalDir(name string) string { return filepath.Join(r.Dir, name) }

// TestLogits is vit-train logits --split test of the checkpoint, over
// the run's evaluation split: the test set, or the training images it
// held out (data.val_split).
func (r Run) TestLogits() string          { return filepath.Join(r.Dir, "test_logits.npy") }
func (r Run) TrainLogitsFile() string     { return filepath.Join(r.Dir, "train_logits.npy") }
func (r Run) DoneFile() string            { return filepath.Join(r.Dir, "study_done.json") }
func (r Run) LogFile() string             { return r.Dir + ".log" }
func (r Run) attemptsFile() string        { return r.Dir + ".attempts.jsonl" }
func (r Run) progressFile() string        { return r.Dir + ".running.json" }
func (r Run) evalJSON(name string) string { return filepath.Join(r.EvalDir(name), "eval.json") }

// Plan is a study's runs in the order they run.
type Plan struct {
	Runs []Run
	ByID map[string]Run
	// Seeds is the number of seeds per arm, fixed before the study runs:
	// the verdicts' t test assumes that seeds are not added after reading
	// them, so a work folder keeps the number it was started with
	// (FixSeeds).
	Seeds int
}

// seedsFile records in a work folder the number of seeds its study was
// started with.
const seedsFile = "study_seeds.json"

// FixSeeds records p.Seeds in the work folder work when it has no record
// yet (and record is set), and refuses another number than the one it
// records.
func FixSeeds(work string, p *Plan, record bool) error {
	path := filepath.Join(work, seedsFile)
	var fixed struct {
		Seeds int `json:"seeds"`
	}
	err := ReadJSON(path, &fixed)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if !record {
			return nil
		}
		fixed.Seeds = p.Seeds
		b, err := json.Marshal(fixed)
		if err != nil {
			return err
		}
		return WriteFileAtomic(path, append(b, '\n'))
	case err != nil:
		return err
	case fixed.Seeds != p.Seeds:
		return fmt.Errorf("--seeds %d: the study in %s was started with %d seeds (%s); the verdicts' t test assumes a number of seeds fixed before the runs, so seeds are not added or dropped after reading verdicts: give --seeds %d, or start another work folder", p.Seeds, work, fixed.Seeds, seedsFile, fixed.Seeds)
	}
	return nil
}

// NewPlan is an empty plan.
func NewPlan() *Plan { return &Plan{ByID: map[string]Run{}} }

// Add appends r.
func (p *Plan) Add(r Run) {
	p.Runs = append(p.Runs, r)
	p.ByID[r.ID] = r
}

// Needs lists the runs of p whose outputs r reads: those whose folder an
// argument of r's command names, alone or as the value of a key=value
// (--from DIR/last.safetensors, --set distill.teacher=DIR/…).
func (p *Plan) Needs(r Run) []string {
	var ids []string
	for _, o := range p.Runs {
		if o.ID == r.ID {
			continue
		}
		prefix := o.Dir + string(filepath.Separator)
		for _, a := range r.Args {
			if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(v, prefix) || strings.HasPrefix(a, prefix) {
				ids = append(ids, o.ID)
				break
			}
		}
	}
	return ids
}

// needIndices is Needs of each run, as indices into p.Runs.
func (p *Plan) needIndices() [][]int {
	index := map[string]int{}
	for i, r := range p.Runs {
		index[r.ID] = i
	}
	needs := make([][]int, len(p.Runs))
	for i, r := range p.Runs {
		for _, id := range p.Needs(r) {
			needs[i] = append(needs[i], index[id])
		}
	}
	return needs
}

// Started says whether any run of p has a folder.
func (p *Plan) Started() bool {
	for _, r := range p.Runs {
		if _, err := os.Stat(r.Dir); err == nil {
			return true
		}
	}
	return false
}

// RunMaker makes a study's runs: each in its folder under the work
// folder, with the data settings of c.
type RunMaker struct {
	work        string
	dataSets    []string
	trainN, evN int
}

// NewRunMaker makes runs under c.Work on c's data.
func NewRunMaker(c Common) RunMaker {
	m := RunMaker{work: c.Work, trainN: 60000, evN: 10000}
	if c.TrainSubset > 0 && c.TrainSubset < m.trainN {
		m.trainN = c.TrainSubset
	}
	if c.EvalSubset > 0 && c.EvalSubset < m.evN {
		m.evN = c.EvalSubset
	}
	m.dataSets = []string{"--set", "data.root=" + c.Data}
	if c.TrainSubset > 0 {
		m.dataSets = append(m.dataSets, "--set", "data.train_subset="+strconv.Itoa(c.TrainSubset))
	}
	if c.EvalSubset > 0 {
		m.dataSets = append(m.dataSets, "--set", "data.eval_subset="+strconv.Itoa(c.EvalSubset))
	}
	return m
}

// New is the run id of seed and epochs at size px, started by the
// vit-train command args (to which --out, epochs, seed and the data
// settings are added), evaluated at its own size.
func (m RunMaker) New(id string, seed, epochs, size int, args ...string) Run {
	dir := filepath.Join(m.work, filepath.FromSlash(id))
	args = append(args, "--out", dir, "--set", "epochs="+strconv.Itoa(epochs), "--set", "seed="+strconv.Itoa(seed))
	return Run{ID: id, Dir: dir, Seed: seed, Epochs: epochs, Args: append(args, m.dataSets...),
		Evals: []Eval{NativeEval}, ImageSize: size, TrainImages: m.trainN, EvalImages: m.evN}
}

// FmtFloat writes v as --set parses it.
func FmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// sameYAML says whether two YAML documents hold the same values: a recipe
// whose comments changed is the same recipe.
func sameYAML(a, b []byte) bool {
	var va, vb any
	if yaml.Unmarshal(a, &va) != nil || yaml.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// WriteConfigs writes the recipes files holds in its folder configs
// (configs/*.yaml) into dir, where the runs' commands name them. Once runs
// have started (started), a recipe that differs from the one in dir is an
// error: the study would mix recipes.
func WriteConfigs(dir string, files embed.FS, started bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := files.ReadDir("configs")
	if err != nil {
		return err
	}
	for _, e := range entries {
		b, err := files.ReadFile("configs/" + e.Name())
		if err != nil {
			return err
		}
		path := filepath.Join(dir, e.Name())
		old, err := os.ReadFile(path)
		switch {
		case err == nil && string(old) == string(b):
			continue
		case err == nil && started && !sameYAML(old, b):
			return fmt.Errorf("%s differs from the study's %s: the runs in this work folder were started with other recipes; use another --work", path, e.Name())
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return err
		}
		if err := WriteFileAtomic(path, b); err != nil {
			return err
		}
	}
	return nil
}

// runConfig is the part of a run folder's config.yaml that a study's
// flags set.
type runConfig struct {
	Epochs int    `yaml:"epochs"`
	Seed   uint64 `yaml:"seed"`
	Data   struct {
		Root        string `yaml:"root"`
		TrainSubset int    `yaml:"train_subset"`
		EvalSubset  int    `yaml:"eval_subset"`
	} `yaml:"data"`
}

// CheckExisting refuses run folders started with other settings than the
// plan's (other flags, or another study in the same work folder): a
// finished one would be skipped and an unfinished one resumed with its own.
func CheckExisting(c Common, p *Plan) error {
	var bad []string
	for _, r := range p.Runs {
		b, err := os.ReadFile(filepath.Join(r.Dir, "config.yaml"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		var rc runConfig
		if err := yaml.Unmarshal(b, &rc); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(r.Dir, "config.yaml"), err)
		}
		var diffs []string
		add := func(key string, got, want any) {
			if got != want {
				diffs = append(diffs, fmt.Sprintf("%s %v (now %v)", key, got, want))
			}
		}
		add("epochs", rc.Epochs, r.Epochs)
		add("seed", rc.Seed, uint64(r.Seed))
		add("data.root", rc.Data.Root, c.Data)
		add("data.train_subset", rc.Data.TrainSubset, c.TrainSubset)
		add("data.eval_subset", rc.Data.EvalSubset, c.EvalSubset)
		if len(diffs) > 0 {
			bad = append(bad, r.ID+": "+strings.Join(diffs, ", "))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("run folders in %s were started with other settings: %s; give the flags they were started with, or another --work",
			c.Work, strings.Join(bad, "; "))
	}
	return nil
}
