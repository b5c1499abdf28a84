package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/npy"
	"github.com/vit-train/vit-train/train"
)

func newLogitsCommand() *cobra.Command {
	var (
		ckPath string
		split  string
		out    string
		sets   []string
		batch  int
		pre    train.PreprocessOverrides
	)
	cmd := &cobra.Command{
		Use:   "logits --checkpoint PATH --out FILE.npy",
		Short: "Write a model's logits over a dataset split as a .npy file (teacher logits for distillation)",
		Long: `Run a checkpoint's model (a ResNet or a ViT) over the training or test split
of its data, in item order, through its evaluation preprocessing (no
augmentation; --crop-pct and --interpolation override it), and write the logits as a float32 (N, C) NumPy array. Train a distilled
student against it with --set distill.teacher_logits=FILE.npy; the data
settings (data.dataset, data.train_subset, …) must be the student's, which
--set can change here too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var sp data.Split
			switch split {
			case "train":
				sp = data.Train
			case "test":
				sp = data.Test
			default:
				return fmt.Errorf("--split %q: want train or test", split)
			}
			logits, n, c, err := train.Logits(ckPath, sp, train.EvalOptions{Sets: sets, Batch: batch, Preprocess: pre})
			if err != nil {
				return err
			}
			if err := npy.WriteFile(out, logits, []int{n, c}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: logits (%d, %d) of the %s split\n", out, n, c, split)
			return nil
		},
	}
	cmd.Flags().StringVar(&ckPath, "checkpoint", "", "checkpoint whose model computes the logits (required)")
	cmd.Flags().StringVar(&split, "split", "train", "dataset split: train or test")
	cmd.Flags().StringVar(&out, "out", "", "output .npy file (required)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a setting of the checkpoint's config, e.g. data.root=DIR")
	cmd.Flags().IntVar(&batch, "batch", 0, "batch size (default: the config's eval_batch_size)")
	addPreprocessFlags(cmd, &pre)
	_ = cmd.MarkFlagRequired("checkpoint")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}
