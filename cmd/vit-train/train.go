package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/vit-train/vit-train/train"
)

func newTrainCommand() *cobra.Command {
	var (
		configPath string
		sets       []string
		out        string
		resume     bool
	)
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a model (default: a small ViT on the embedded Fashion-MNIST subset)",
		Long: `Train a model. Settings are layered: built-in defaults, then --config FILE
(YAML, see configs/), then each --set key=value (dotted keys, e.g.
--set optim.lr=5e-4 --set epochs=10). The resolved configuration is saved as
config.yaml in the run folder, beside the checkpoints (last, best),
metrics (steps/epochs as .jsonl and .csv) and the evaluation reports.

Ctrl-C saves a checkpoint of the exact position; --resume continues from it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if resume && configPath == "" && out != "" {
				// A resumed run takes its own resolved configuration by default.
				if p := filepath.Join(out, "config.yaml"); fileExists(p) {
					configPath = p
				}
			}
			cfg, err := train.LoadConfig(configPath, sets)
			if err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join("runs", cfg.Model.Name)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			_, err = train.Run(ctx, cfg, train.Options{Dir: out, Resume: resume, Out: cmd.ErrOrStderr()})
			if errors.Is(err, train.ErrInterrupted) {
				fmt.Fprintf(cmd.ErrOrStderr(), "resume with: vit-train train --out %s --resume\n", out)
				return nil
			}
			return err
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "YAML configuration (see configs/)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a setting, key=value (repeatable)")
	cmd.Flags().StringVar(&out, "out", "", "run folder (default runs/<model>)")
	cmd.Flags().BoolVar(&resume, "resume", false, "continue from the run folder's last checkpoint")
	return cmd
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
