package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/vit-train/vit-train/train"
)

func newEvalCommand() *cobra.Command {
	var (
		ckPath  string
		sets    []string
		out     string
		ema     bool
		asJSON  bool
		batch   int
		imgSize int
	)
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Evaluate a checkpoint: top-1, top-5, loss, per-class accuracy, confusion matrix",
		Long: `Evaluate a checkpoint on the evaluation split of its training data, or of
the data given with --set data.dataset=… --set data.root=…. Writes
eval.json, eval_per_class.csv and eval_confusion.csv into --out (default: the
checkpoint's folder). A distilled model is scored with the class head, the
distillation head and their average (DeiT's inference rule). Ctrl-C stops
the evaluation (exit status 130; 143 for SIGTERM).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := train.OpenEval(ckPath, train.EvalOptions{Sets: sets, Batch: batch, EMA: ema, ImageSize: imgSize})
			if err != nil {
				return err
			}
			if r.Note != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "evaluating at %d px: %s\n", imgSize, r.Note)
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
			if out == "" {
				out = filepath.Dir(ckPath)
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			if err := ev.WriteReport(out, "eval_", r.Data.Classes); err != nil {
				return err
			}
			js, err := json.MarshalIndent(ev, "", "  ")
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(out, "eval.json"), js, 0o644); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				_, err := fmt.Fprintln(w, string(js))
				return err
			}
			fmt.Fprintf(w, "%s on %s (%d images): top-1 %.2f%%  top-5 %.2f%%  loss %.4f\n", r.Net.Name(), r.Config.Data.Dataset, ev.N, ev.Top1, ev.Top5, ev.Loss)
			if ev.ClassHead != nil {
				fmt.Fprintf(w, "  class head %.2f%%, distillation head %.2f%%, average %.2f%%\n", ev.ClassHead.Top1, ev.DistHead.Top1, ev.Top1)
			}
			fmt.Fprintf(w, "reports in %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVar(&ckPath, "checkpoint", "", "checkpoint to evaluate (required)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a setting of the checkpoint's config, e.g. data.root=DIR")
	cmd.Flags().StringVar(&out, "out", "", "folder for the reports (default: the checkpoint's)")
	cmd.Flags().BoolVar(&ema, "ema", false, "evaluate the EMA weights")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().IntVar(&batch, "batch", 0, "evaluation batch size (default: the config's)")
	cmd.Flags().IntVar(&imgSize, "img-size", 0, "evaluate at another image size, a ViT's pos_embed resampled (default: the checkpoint's)")
	_ = cmd.MarkFlagRequired("checkpoint")
	return cmd
}
