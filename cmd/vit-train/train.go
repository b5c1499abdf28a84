package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vit-train/vit-train/comm"
	"github.com/vit-train/vit-train/internal/layered"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/train"
)

// trainFlags are the flags shared by train and finetune.
type trainFlags struct {
	// base is the configuration that --config and --set change.
	base func() train.Config
	// defaultOut is the run folder of a configuration when --out is not
	// given.
	defaultOut func(train.Config) string
	configPath string
	sets       []string
	out        string
	resume     bool
	checkData  bool
}

func (f *trainFlags) register(cmd *cobra.Command, outHelp string) {
	cmd.Long += "\n\n" + namesHelp()
	cmd.Flags().StringVar(&f.configPath, "config", "", "YAML configuration (see configs/)")
	cmd.Flags().StringArrayVar(&f.sets, "set", nil, "override a setting, key=value (repeatable)")
	cmd.Flags().StringVar(&f.out, "out", "", "run folder (default "+outHelp+")")
	cmd.Flags().BoolVar(&f.resume, "resume", false, "continue from the run folder's last checkpoint, with its config.yaml")
	cmd.Flags().BoolVar(&f.checkData, "check-data", false, "read every file of an image folder first, and name all that cannot be read (an error unless data.skip_corrupt)")
}

// namesHelp lists the settings that take a name from a fixed list, with
// their names (train.Choices).
func namesHelp() string {
	var b strings.Builder
	b.WriteString("Settings that take a name (model.name: see vit-train models):")
	for _, c := range train.Choices() {
		fmt.Fprintf(&b, "\n  %-14s %s", c.Key, strings.Join(c.Names, ", "))
	}
	return b.String()
}

// run trains with the settings layered as defaults → --config → pre → --set,
// as one rank of the data-parallel job the MPI launcher started (or alone).
// asked are the settings of the flags the command line gave (a subset of
// pre's keys); a resumed run refuses those that would change its
// configuration. In a job of several ranks, an error on any rank aborts the
// whole job with a message naming the rank; only rank 0 prints.
func (f *trainFlags) run(cmd *cobra.Command, pre, asked []string) error {
	c, err := comm.FromEnv()
	if err != nil {
		return err
	}
	defer c.Close()
	err = f.runRank(cmd, pre, asked, c)
	if err == nil {
		return nil
	}
	var sigErr *signalError
	interrupted := errors.Is(err, train.ErrInterrupted) || errors.As(err, &sigErr)
	if c.Size() > 1 && !interrupted {
		c.Abort(1, fmt.Sprintf("vit-train: rank %d of %d: %v", c.Rank(), c.Size(), err))
	}
	if c.Rank() != 0 {
		return &quietError{err}
	}
	return err
}

// config resolves the run's configuration and folder. A resumed run
// without --config takes the run folder's config.yaml, then --set; the
// flags in asked must not change it.
func (f *trainFlags) config(pre, asked []string) (train.Config, string, error) {
	// Checked once the run's own configuration is known.
	cfg, err := f.base().Layer(f.configPath, append(pre, f.sets...))
	if err != nil {
		return train.Config{}, "", err
	}
	out := f.out
	if out == "" {
		out = f.defaultOut(cfg)
	}
	runConfig := filepath.Join(out, "config.yaml")
	if !f.resume || f.configPath != "" || !fileExists(runConfig) {
		return cfg, out, cfg.Validate()
	}
	if cfg, err = f.base().Layer(runConfig, f.sets); err != nil {
		return train.Config{}, "", err
	}
	if err := cfg.Validate(); err != nil {
		return train.Config{}, "", err
	}
	if len(asked) == 0 {
		return cfg, out, nil
	}
	wanted, err := f.base().Layer(runConfig, append(asked, f.sets...))
	if err != nil {
		return train.Config{}, "", err
	}
	if changes := layered.Diff(layered.Of(cfg), layered.Of(wanted)); len(changes) > 0 {
		desc := make([]string, len(changes))
		for i, ch := range changes {
			desc[i] = fmt.Sprintf("%s = %s, not %s", ch.Key, ch.From, ch.To)
		}
		return train.Config{}, "", fmt.Errorf("--resume continues the run in %s as its config.yaml says: %s; the flags that ask otherwise cannot take effect: resume without them, or start a new run in another --out",
			out, strings.Join(desc, "; "))
	}
	return cfg, out, nil
}

// runRank is run on one rank of communicator c.
func (f *trainFlags) runRank(cmd *cobra.Command, pre, asked []string, c comm.Communicator) error {
	cfg, out, err := f.config(pre, asked)
	if err != nil {
		return err
	}
	w := cmd.ErrOrStderr()
	if c.Rank() != 0 {
		w = io.Discard
	}
	if f.checkData {
		if err := train.CheckData(cfg.Data, w); err != nil {
			return err
		}
	}
	sig := catchSignals(w, "stopping after the current optimiser step and saving a checkpoint")
	defer sig.stop()
	if c.Size() > 1 {
		if note := mpirunCtrlCNote(os.Getenv); note != "" {
			fmt.Fprintln(w, note)
		}
	}
	_, err = train.Run(sig.ctx, cfg, train.Options{Dir: out, Resume: f.resume, Out: w, NoProgressBar: !isTerminal(w), Comm: c, AfterEpoch: redrawCharts})
	if errors.Is(err, train.ErrInterrupted) {
		msg := fmt.Sprintf("training interrupted; resume with: vit-train %s --out %s --resume", cmd.Name(), out)
		if c.Size() > 1 {
			msg = fmt.Sprintf("training interrupted; resume with: mpirun -np %d vit-train %s --out %s --resume", c.Size(), cmd.Name(), out)
		}
		if s := sig.caught(); s != 0 {
			return &signalError{sig: s, msg: msg}
		}
		return &interruptedError{msg}
	}
	return err
}

// interruptedError is a run stopped by an interrupt that no signal of this
// process caused (a train.Hook's stop, or another rank's signal).
type interruptedError struct{ msg string }

func (e *interruptedError) Error() string { return e.msg }
func (e *interruptedError) Unwrap() error { return train.ErrInterrupted }

func newTrainCommand() *cobra.Command {
	var (
		modelName                    string
		imgSize, numClasses, inChans int
	)
	f := trainFlags{base: train.DefaultConfig, defaultOut: trainOut}
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a model (default: a small ViT on the embedded Fashion-MNIST subset)",
		Long: `Train a model. Settings are layered: built-in defaults, then --config FILE
(YAML, see configs/), then the flags --model, --img-size, --num-classes and
--in-chans, then each --set key=value (dotted keys, e.g.
--set optim.lr=5e-4 --set epochs=10). The resolved configuration is saved as
config.yaml in the run folder, beside the checkpoints (last, best),
metrics (steps/epochs as .jsonl and .csv) and the evaluation reports.

Ctrl-C (SIGINT) or SIGTERM stops the run after the current optimiser step
(a gradient-accumulation group is finished first) and saves a checkpoint of
that exact position; --resume continues from it, bit-exactly, with the run
folder's config.yaml (--set may change it; the model flags may not). A
second signal quits at once, keeping the previous checkpoint.

Exit status: 0 when the run finishes; 130 after SIGINT and 143 after
SIGTERM, once the checkpoint is saved (as shells report a process killed
by the signal); 1 on any error (the last checkpoint is kept as it was).

--model (model.name) takes a ViT preset (see: vit-train models) or a ResNet
(resnet20/32/44/56/110 for small images, resnet18/34/50/101/152), e.g. a CNN
teacher: vit-train train --model resnet20 --out runs/teacher. Unless set
(--in-chans, --num-classes, or model.in_chans, model.num_classes), a
model's channels and classes are the data's; a ResNet's image size is too.

DeiT distillation trains a distilled model (deit_*_distilled_*) with
--set distill.type=hard|soft and a teacher: distill.teacher=CHECKPOINT (run
frozen on the student's augmented batch) or distill.teacher_logits=FILE.npy
(written by vit-train logits); distill.alpha (0.5) and distill.tau (1.0) as
DeiT. See configs/fashion_mnist_distill.yaml.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var pre []string
			if modelName != "" {
				pre = append(pre, "model.name="+modelName)
			}
			pre = append(pre, changedInts(cmd, map[string]string{"img-size": "model.img_size", "num-classes": "model.num_classes", "in-chans": "model.in_chans"},
				map[string]int{"img-size": imgSize, "num-classes": numClasses, "in-chans": inChans})...)
			return f.run(cmd, pre, pre)
		},
	}
	f.register(cmd, "runs/<model>")
	cmd.Flags().StringVar(&modelName, "model", "", "model to train, as --set model.name=NAME (a ViT preset or resnet20, resnet56, …)")
	cmd.Flags().IntVar(&imgSize, "img-size", 0, "input image size, as --set model.img_size=N (default: the model's)")
	cmd.Flags().IntVar(&numClasses, "num-classes", 0, "classes, as --set model.num_classes=K (default: the data's)")
	cmd.Flags().IntVar(&inChans, "in-chans", 0, "input channels, as --set model.in_chans=C (default: the data's)")
	return cmd
}

// trainOut is train's run folder: runs/<model>.
func trainOut(cfg train.Config) string { return filepath.Join("runs", cfg.Model.Name) }

// finetuneOut is finetune's run folder, apart from the run it starts
// from: runs/<model>_finetune_<size>px.
func finetuneOut(cfg train.Config) string {
	return filepath.Join("runs", fmt.Sprintf("%s_finetune_%dpx", cfg.Model.Name, cfg.Model.ImageSize))
}

// changedInts are the settings key=value of the integer flags the command
// line gave, in flag-name order; keys maps a flag to its setting.
func changedInts(cmd *cobra.Command, keys map[string]string, values map[string]int) []string {
	var sets []string
	for _, flag := range slices.Sorted(maps.Keys(keys)) {
		if cmd.Flags().Changed(flag) {
			sets = append(sets, fmt.Sprintf("%s=%d", keys[flag], values[flag]))
		}
	}
	return sets
}

func newFinetuneCommand() *cobra.Command {
	f := trainFlags{base: train.FinetuneConfig, defaultOut: finetuneOut}
	var (
		from       string
		imgSize    int
		numClasses int
		freeze     bool
		ema        bool
	)
	cmd := &cobra.Command{
		Use:   "finetune --from CHECKPOINT",
		Short: "Fine-tune a checkpoint, at a new image size or for new classes",
		Long: `Fine-tune a checkpoint: its model is rebuilt at --img-size (pos_embed
resampled on its 2-D grid, bicubic and antialiased) and for --num-classes
(head and head_dist replaced by fresh ones when the count changes), its
weights loaded, and the model trained with the configuration given by
--config and --set (see configs/vitb16_finetune_384.yaml and
configs/fashion_mnist_finetune_56.yaml). The run folder defaults to
runs/<model>_finetune_<size>px, apart from the run the checkpoint
came from.

Without them it fine-tunes for one epoch on the default data with the
ViT paper's fine-tuning recipe: SGD with momentum 0.9, lr 0.06 for a batch
of 512 scaled to the batch (optim.scale_lr), no weight decay, gradient
clipping at norm 1, warmup then cosine decay to 0, no augmentation. It
keeps a converged model's accuracy at the checkpoint's own resolution.
--freeze trains only the heads. Unless --config or --set names
data.dataset, the data is the checkpoint's (data.dataset, data.root and
data.skip_corrupt of the configuration it records), held out as it was
(data.val_split, data.val_seed).

--resume continues a fine-tune with its run folder's config.yaml (--from
may be left out); --img-size, --num-classes, --freeze and --ema cannot
change it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" && !f.resume {
				return errors.New(`required flag "from" not set: the checkpoint to fine-tune`)
			}
			var pre, asked []string
			if from != "" {
				ck, err := train.LoadCheckpoint(from)
				if err != nil {
					return err
				}
				own, err := f.setsDataset()
				if err != nil {
					return err
				}
				if !own {
					f.base = finetuneBase(ck)
				}
				sets, err := finetuneSets(ck, imgSize, numClasses)
				if err != nil {
					return err
				}
				pre = append(sets, "init.from="+from, fmt.Sprintf("init.freeze_backbone=%t", freeze), fmt.Sprintf("init.ema=%t", ema))
				asked = append(asked, "init.from="+from)
			}
			asked = append(asked, changedInts(cmd, map[string]string{"img-size": "model.img_size", "num-classes": "model.num_classes"},
				map[string]int{"img-size": imgSize, "num-classes": numClasses})...)
			if cmd.Flags().Changed("freeze") {
				asked = append(asked, fmt.Sprintf("init.freeze_backbone=%t", freeze))
			}
			if cmd.Flags().Changed("ema") {
				asked = append(asked, fmt.Sprintf("init.ema=%t", ema))
			}
			return f.run(cmd, pre, asked)
		},
	}
	f.register(cmd, "runs/<model>_finetune_<size>px")
	cmd.Flags().StringVar(&from, "from", "", "checkpoint to fine-tune (required, except with --resume)")
	cmd.Flags().IntVar(&imgSize, "img-size", 0, "new input image size (default: the checkpoint's)")
	cmd.Flags().IntVar(&numClasses, "num-classes", 0, "new number of classes (default: the checkpoint's)")
	cmd.Flags().BoolVar(&freeze, "freeze", false, "train only the classification heads")
	cmd.Flags().BoolVar(&ema, "ema", false, "start from the checkpoint's EMA weights")
	return cmd
}

// setsDataset reports whether --config or --set names data.dataset.
func (f *trainFlags) setsDataset() (bool, error) {
	probe := f.base()
	probe.Data.Dataset = "" // no dataset's name
	c, err := probe.Layer(f.configPath, f.sets)
	return c.Data.Dataset != "", err
}

// finetuneBase is what a fine-tune of ck starts from when --config and
// --set name no data.dataset: train.FinetuneConfig on the data ck was
// trained on (data.dataset, data.root and data.skip_corrupt of its
// configuration, when it records one), split as it was (data.val_split
// and data.val_seed), so that images held out of its training stay out
// of the fine-tune's.
func finetuneBase(ck *train.Checkpoint) func() train.Config {
	return func() train.Config {
		c := train.FinetuneConfig()
		if ck.Config != nil {
			d := ck.Config.Data
			c.Data.Dataset, c.Data.Root, c.Data.SkipCorrupt = d.Dataset, d.Root, d.SkipCorrupt
			c.Data.ValSplit, c.Data.ValSeed = d.ValSplit, d.ValSeed
		}
		return c
	}
}

// finetuneSets are the model settings that rebuild the network of the
// checkpoint ck, whatever its name, at imgSize and for numClasses
// (0 keeps the checkpoint's): the name, the input, and the full
// configuration as the checkpoint records it (model.spec), so that an
// imported model that is no preset fine-tunes like one.
func finetuneSets(ck *train.Checkpoint, imgSize, numClasses int) ([]string, error) {
	spec := ck.Spec.WithInput(imgSize, numClasses)
	channels, size := spec.Input()
	sets := []string{
		"model.name=" + spec.Name(),
		fmt.Sprintf("model.in_chans=%d", channels),
		fmt.Sprintf("model.img_size=%d", size),
		fmt.Sprintf("model.num_classes=%d", spec.NumClasses()),
	}
	_, fields, err := model.EncodeConfig(spec)
	if err != nil {
		return nil, err
	}
	return append(sets, fmt.Sprintf("model.spec={%q: %s}", spec.Arch(), fields)), nil
}

// isTerminal reports whether w is a terminal, where a progress bar can
// redraw itself in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// mpirunCtrlCNote warns, under Open MPI's mpirun, when Ctrl-C on mpirun
// cannot save a checkpoint: mpirun does not forward SIGINT, but sends the
// processes SIGTERM and then SIGKILL odls_base_sigkill_timeout seconds
// apart (1 s by default), too little for a step and a save.
func mpirunCtrlCNote(getenv func(string) string) string {
	if getenv("OMPI_COMM_WORLD_SIZE") == "" {
		return ""
	}
	v := getenv("OMPI_MCA_odls_base_sigkill_timeout")
	if s, err := strconv.Atoi(v); err == nil && s >= minSigkillTimeout {
		return ""
	}
	if v == "" {
		v = "1 (the default)"
	}
	return fmt.Sprintf("note: mpirun's odls_base_sigkill_timeout is %s s: Ctrl-C on mpirun kills the processes before they can save a checkpoint; start mpirun with --mca odls_base_sigkill_timeout 60 (longer than a step), or stop the job with SIGINT to the vit-train processes", v)
}

// minSigkillTimeout is the odls_base_sigkill_timeout from which
// mpirunCtrlCNote stays quiet.
const minSigkillTimeout = 10
