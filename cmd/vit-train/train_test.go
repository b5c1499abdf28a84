package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/train"
)

// quickRun are settings that make a run of the main job take a moment.
var quickRun = []string{"--set", "epochs=1", "--set", "data.train_subset=64", "--set", "data.eval_subset=50",
	"--set", "data.batch_size=32", "--set", "data.eval_batch_size=50", "--set", "progress=false"}

// TestTrainModelFlags checks that train takes --img-size, --num-classes and
// --in-chans as model.img_size, model.num_classes and model.in_chans, and
// that a resumed run refuses those that would change it.
func TestTrainModelFlags(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"train", "--out", dir, "--model", "vit_fmnist_patch4_28", "--img-size", "16", "--num-classes", "10", "--in-chans", "1",
		"--set", "ema.enabled=true"}, quickRun...)
	if out, err := run(t, args...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ck, err := train.LoadCheckpoint(filepath.Join(dir, train.LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if ch, size := ck.Spec.Input(); size != 16 || ch != 1 || ck.Spec.NumClasses() != 10 {
		t.Errorf("train --img-size 16: the model takes %d channels of %d px, %d classes", ch, size, ck.Spec.NumClasses())
	}
	_, err = run(t, "train", "--out", dir, "--resume", "--img-size", "20")
	if err == nil || !strings.Contains(err.Error(), "model.img_size = 16, not 20") || !strings.Contains(err.Error(), "cannot take effect") {
		t.Errorf("train --resume --img-size 20 on a 16 px run: %v", err)
	}
	_, err = run(t, "train", "--out", dir, "--resume", "--img-size", "16")
	if err == nil || !strings.Contains(err.Error(), "is finished") {
		t.Errorf("train --resume --img-size 16 on its own finished 16 px run: %v", err)
	}
	// --set is checked against the run's configuration (EMA on), not the defaults.
	_, err = run(t, "train", "--out", dir, "--resume", "--set", "ema.decay=0.99")
	if err == nil || !strings.Contains(err.Error(), "is finished") {
		t.Errorf("train --resume --set ema.decay=0.99 on a run with EMA: %v", err)
	}
}

// TestFinetuneAfterTheMainJob checks that finetune, run after the main
// job as the README does, writes a run folder of its own, and that a
// resumed fine-tune refuses an --img-size it cannot take.
func TestFinetuneAfterTheMainJob(t *testing.T) {
	t.Chdir(t.TempDir())
	if out, err := run(t, append([]string{"train"}, quickRun...)...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	from := filepath.Join("runs", "vit_fmnist_patch4_28", "best.safetensors")
	ft := append([]string{"finetune", "--from", from}, quickRun...)
	out, err := run(t, ft...)
	if err != nil {
		t.Fatalf("finetune after the main job: %v\n%s", err, out)
	}
	ftDir := filepath.Join("runs", "vit_fmnist_patch4_28_finetune_28px")
	if _, err := os.Stat(filepath.Join(ftDir, train.BestCheckpoint)); err != nil || !strings.Contains(out, "run folder "+ftDir) {
		t.Fatalf("finetune wrote no run folder %s: %v\n%s", ftDir, err, out)
	}
	out, err = run(t, append([]string{"finetune", "--from", from, "--img-size", "56"}, quickRun...)...)
	if err != nil || !strings.Contains(out, "runs/vit_fmnist_patch4_28_finetune_56px") {
		t.Fatalf("finetune --img-size 56: %v\n%s", err, out)
	}
	_, err = run(t, "finetune", "--from", from, "--out", ftDir, "--resume", "--img-size", "56")
	if err == nil || !strings.Contains(err.Error(), "model.img_size = 28, not 56") {
		t.Errorf("finetune --resume --img-size 56 of a 28 px fine-tune: %v", err)
	}
	_, err = run(t, "finetune", "--out", ftDir, "--resume", "--freeze")
	if err == nil || !strings.Contains(err.Error(), "init.freeze_backbone = false, not true") {
		t.Errorf("finetune --resume --freeze of a fine-tune of the whole model: %v", err)
	}
	// Without flags that change it, the resumed fine-tune is the run's own:
	// finished here.
	_, err = run(t, "finetune", "--out", ftDir, "--resume")
	if err == nil || !strings.Contains(err.Error(), "is finished") {
		t.Errorf("finetune --resume of a finished fine-tune: %v", err)
	}
	if _, err := run(t, "finetune"); err == nil || !strings.Contains(err.Error(), `"from"`) {
		t.Errorf("finetune without --from: %v", err)
	}
}

// TestHelpAndCounts checks small things a careful reader notices: flag
// help that cobra would misread, and parameter counts under a million.
func TestHelpAndCounts(t *testing.T) {
	for _, command := range []string{"info", "bench", "import", "train"} {
		out, err := run(t, command, "--help")
		if err != nil || strings.Contains(out, "--model vit-train") {
			t.Errorf("%s --help (%v):\n%s", command, err, out)
		}
	}
	for n, want := range map[int]string{16580: "16.6K", 86567656: "86.6M", 999: "1.0K"} {
		if got := countString(n); got != want {
			t.Errorf("countString(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestEvalOfAnImportedModelNamesTheDataSettings checks that evaluating an
// imported checkpoint, which records no data, on the default data names
// the settings to give.
func TestEvalOfAnImportedModelNamesTheDataSettings(t *testing.T) {
	dir := t.TempDir()
	m, err := vit.New(vit.Config{Name: "rgb", ImageSize: 16, PatchSize: 8, Channels: 3, NumClasses: 4, EmbedDim: 8,
		Depth: 1, Heads: 1, MLPDim: 8, LayerNormEps: 1e-6, QKVBias: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	timmFile := filepath.Join(dir, "timm.safetensors")
	if err := safetensors.WriteFileAtomic(timmFile, m.Tensors(), map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	imported := filepath.Join(dir, "imported.safetensors")
	if out, err := run(t, "import", "--from", timmFile, "--heads", "1", "--out", imported); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	_, err = run(t, "eval", "--checkpoint", imported)
	if err == nil || !strings.Contains(err.Error(), "data.dataset = fashion-mnist-embedded") || !strings.Contains(err.Error(), "set data.dataset and data.root") {
		t.Errorf("eval of an imported RGB model on the default data: %v", err)
	}
}

// TestShortRunHasStepsAndCharts checks that a run shorter than log_every
// steps logs its last step, with the CSV header, and draws lr.png.
func TestShortRunHasStepsAndCharts(t *testing.T) {
	dir := t.TempDir()
	if out, err := run(t, append([]string{"train", "--out", dir}, quickRun...)...); err != nil { // 2 steps, log_every 50
		t.Fatalf("%v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "steps.csv"))
	if lines := strings.Split(strings.TrimSpace(string(raw)), "\n"); err != nil || len(lines) != 2 || !strings.HasPrefix(lines[0], "step,") || !strings.HasPrefix(lines[1], "2,") {
		t.Errorf("steps.csv of a 2-step run (%v):\n%s", err, raw)
	}
	if _, err := os.Stat(filepath.Join(dir, "lr.png")); err != nil {
		t.Errorf("a 2-step run drew no lr.png: %v", err)
	}
}

// TestNoProgressBarInALog checks that a run whose output is no terminal
// (a log file, a pipe) writes no progress bar into it.
func TestNoProgressBarInALog(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"train", "--out", dir}, quickRun[:len(quickRun)-2]...) // progress left on
	out, err := run(t, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(out, "\r") || !strings.Contains(out, "test accuracy") {
		t.Errorf("the output holds a progress bar:\n%q", out)
	}
	logFile, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	if isTerminal(logFile) {
		t.Error("a file is taken for a terminal")
	}
}

// TestCheckDataFlag checks that train --check-data names the unreadable
// files before training and trains nothing.
func TestCheckDataFlag(t *testing.T) {
	dir := t.TempDir()
	writePhotos(t, dir, 2)
	bad := filepath.Join(dir, "photos", "val", "dog", "2.jpg")
	if err := os.WriteFile(bad, []byte("not a JPEG"), 0o644); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, "run")
	out, err := run(t, "train", "--check-data", "--set", "data.dataset=imagefolder", "--set", "data.root="+filepath.Join(dir, "photos"), "--out", runDir)
	if err == nil || !strings.Contains(err.Error(), "1 of the 12 files") || !strings.Contains(out, bad) {
		t.Errorf("train --check-data on a folder with a bad file: %v\n%s", err, out)
	}
	if _, err := os.Stat(runDir); err == nil {
		t.Error("train --check-data started a run on unreadable data")
	}
}

// TestFinetuneTakesTheCheckpointsData checks that finetune trains on the
// data of the checkpoint's run, unless --set names another data set.
func TestFinetuneTakesTheCheckpointsData(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writePhotos(t, dir, 2)
	tiny := []string{"--set", "epochs=1", "--set", "data.batch_size=3", "--set", "data.eval_batch_size=3", "--set", "progress=false"}
	if out, err := run(t, append([]string{"train", "--model", "vit_fmnist_patch4_28", "--set", "data.dataset=imagefolder", "--set", "data.root=photos",
		"--set", "model.embed_dim=16", "--set", "model.depth=1", "--set", "model.num_heads=2", "--out", "rgb"}, tiny...)...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := run(t, append([]string{"finetune", "--from", "rgb/best.safetensors", "--out", "ft"}, tiny...)...)
	if err != nil || !strings.Contains(out, "data imagefolder: 6 train / 6 eval images") {
		t.Fatalf("finetune of a model trained on an image folder: %v\n%s", err, out)
	}
	// Another data set, named with --set, leaves the checkpoint's data.root behind.
	_, err = run(t, append([]string{"finetune", "--from", "rgb/best.safetensors", "--out", "ft2", "--set", "data.dataset=fashion-mnist-embedded"}, tiny...)...)
	if err == nil || strings.Contains(err.Error(), "no effect") || !strings.Contains(err.Error(), "takes 3 channels") {
		t.Errorf("finetune of an RGB model on Fashion-MNIST: %v", err)
	}
	// A run on class folders with data.val_split: the fine-tune holds out
	// the same images.
	if out, err := run(t, append([]string{"train", "--model", "vit_fmnist_patch4_28", "--set", "data.dataset=imagefolder", "--set", "data.root=photos/train",
		"--set", "data.val_split=0.5", "--set", "data.val_seed=3", "--set", "model.embed_dim=16", "--set", "model.depth=1", "--set", "model.num_heads=2", "--out", "held"}, tiny...)...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err = run(t, append([]string{"finetune", "--from", "held/best.safetensors", "--out", "ft3"}, tiny...)...)
	if err != nil || !strings.Contains(out, "data imagefolder: 3 train / 3 eval images") || !strings.Contains(out, "held out of the training set by data.val_split = 0.5") {
		t.Fatalf("finetune of a model trained on held-out class folders: %v\n%s", err, out)
	}
	held, err1 := os.ReadFile(filepath.Join("held", train.HeldOutFile))
	ft, err2 := os.ReadFile(filepath.Join("ft3", train.HeldOutFile))
	if err1 != nil || err2 != nil || string(held) != string(ft) {
		t.Errorf("the fine-tune held out other images:\n%s%v\n%s%v", held, err1, ft, err2)
	}
}

// TestHelpListsTheNames checks that train's and finetune's help list every
// name each setting that takes a name accepts.
func TestHelpListsTheNames(t *testing.T) {
	for _, command := range []string{"train", "finetune"} {
		out, err := run(t, command, "--help")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range train.Choices() {
			if !strings.Contains(out, c.Key+" ") || len(c.Names) == 0 {
				t.Errorf("%s --help does not list %s", command, c.Key)
			}
			for _, name := range c.Names {
				if !strings.Contains(out, name) {
					t.Errorf("%s --help does not list %s = %s", command, c.Key, name)
				}
			}
		}
	}
}

// TestModelFlagsSetTheOverrides gives info and bench a flag for each input
// and shape field of model.Overrides, and checks that bench's become the
// model settings of the run it times.
func TestModelFlagsSetTheOverrides(t *testing.T) {
	var o model.Overrides
	for _, command := range []string{"info", "bench"} {
		out, err := run(t, command, "--help")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append(o.Of(model.Input), o.Of(model.Shape)...) {
			if !strings.Contains(out, "--"+f.Flag()+" ") {
				t.Errorf("%s --help has no --%s", command, f.Flag())
			}
		}
	}
	args := []string{"bench", "--model", "vit_fmnist_patch4_28", "--batch", "4", "--steps", "1", "--json",
		"--depth", "2", "--mlp-ratio", "3", "--num-classes", "4", "--distilled"}
	out, err := run(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	var r benchResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	spec, err := model.Create("vit_fmnist_patch4_28", model.Overrides{Depth: 2, MLPRatio: 3, NumClasses: 4, Distilled: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := spec.Config.ParamCount(); r.Params != want {
		t.Errorf("%v: %d parameters, want %d (depth 2, MLP ratio 3, 4 classes, distilled)", args, r.Params, want)
	}
}
