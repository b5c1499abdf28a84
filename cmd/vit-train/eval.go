package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vit-train/vit-train/train"
)

// evalFlags are the eval command's flags.
type evalFlags struct {
	ckPath, out    string
	sets           []string
	ema, asJSON    bool
	batch, imgSize int
	pre            train.PreprocessOverrides
}

func newEvalCommand() *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Evaluate a checkpoint: top-1, top-5, loss, per-class accuracy, confusion matrix",
		Long: `Evaluate a checkpoint on the evaluation split of its training data, or of
the data given with --set data.dataset=… --set data.root=…. Writes
eval.json, eval_per_class.csv and eval_confusion.csv into --out (default:
eval_<checkpoint> beside the checkpoint, e.g. runs/R/eval_best for
runs/R/best.safetensors, so that the training run's own reports stay). A
distilled model is scored with the class head, the distillation head and
their average (DeiT's inference rule). The images go through the
checkpoint's evaluation preprocessing, which --crop-pct and
--interpolation override. Ctrl-C stops
the evaluation (exit status 130; 143 for SIGTERM).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd) },
	}
	cmd.Flags().StringVar(&f.ckPath, "checkpoint", "", "checkpoint to evaluate (required)")
	cmd.Flags().StringArrayVar(&f.sets, "set", nil, "override a setting of the checkpoint's config, e.g. data.root=DIR")
	cmd.Flags().StringVar(&f.out, "out", "", "folder for the reports (default: eval_<checkpoint> beside the checkpoint)")
	cmd.Flags().BoolVar(&f.ema, "ema", false, "evaluate the EMA weights")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	cmd.Flags().IntVar(&f.batch, "batch", 0, "evaluation batch size (default: the config's)")
	cmd.Flags().IntVar(&f.imgSize, "img-size", 0, "evaluate at another image size, a ViT's pos_embed resampled (default: the checkpoint's)")
	addPreprocessFlags(cmd, &f.pre)
	_ = cmd.MarkFlagRequired("checkpoint")
	return cmd
}

// run evaluates the checkpoint, writes the reports and prints the result.
func (f *evalFlags) run(cmd *cobra.Command) error {
	r, err := train.OpenEval(f.ckPath, train.EvalOptions{Sets: f.sets, Batch: f.batch, EMA: f.ema, ImageSize: f.imgSize, Preprocess: f.pre})
	if err != nil {
		return err
	}
	if r.Note != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "evaluating at %d px: %s\n", f.imgSize, r.Note)
	}
	sig := catchSignals(cmd.ErrOrStderr(), "stopping the evaluation")
	defer sig.stop()
	ev, err := train.Evaluate(sig.ctx, r.Graph, r.Loader)
	if s := sig.caught(); err != nil && s != 0 {
		return &signalError{sig: s, msg: "evaluation interrupted; no report written"}
	}
	if err != nil {
		return err
	}
	out := f.out
	if out == "" {
		out = evalOut(f.ckPath)
	}
	js, err := writeEvalReports(out, ev, r.Data.Classes)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if f.asJSON {
		_, err := fmt.Fprintln(w, string(js))
		return err
	}
	fmt.Fprintf(w, "%s on %s (%d %s images): top-1 %.2f%%  top-5 %.2f%%  loss %.4f\n", r.Net.Spec().Name(), r.Config.Data.Dataset, ev.N, r.Config.Data.EvalSet(), ev.Top1, ev.Top5, ev.Loss)
	if note := r.Config.Data.HeldOutNote(); note != "" {
		fmt.Fprintf(w, "  %s\n", note)
	}
	if ev.ClassHead != nil {
		fmt.Fprintf(w, "  class head %.2f%%, distillation head %.2f%%, average %.2f%%\n", ev.ClassHead.Top1, ev.DistHead.Top1, ev.Top1)
	}
	fmt.Fprintf(w, "reports in %s\n", out)
	return nil
}

// evalOut is eval's default report folder: eval_<name> beside the
// checkpoint <name>.safetensors.
func evalOut(ckPath string) string {
	base := filepath.Base(ckPath)
	return filepath.Join(filepath.Dir(ckPath), "eval_"+strings.TrimSuffix(base, filepath.Ext(base)))
}

// writeEvalReports writes eval.json, eval_per_class.csv and
// eval_confusion.csv into out and returns the JSON.
func writeEvalReports(out string, ev train.Evaluation, classes []string) ([]byte, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	if err := ev.WriteReport(out, "eval_", classes); err != nil {
		return nil, err
	}
	js, err := json.MarshalIndent(ev, "", "  ")
	if err != nil {
		return nil, err
	}
	return js, os.WriteFile(filepath.Join(out, "eval.json"), js, 0o644)
}
