// Command vit-train trains, evaluates and inspects Vision Transformers.
//
//	vit-train train                      # the default job: a small ViT on the embedded Fashion-MNIST subset
//	vit-train models                     # list the presets
//	vit-train info --model vit_base_patch16_224
//	vit-train bench --model vit_cifar_patch4_32 --batch 64
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "vit-train:", err)
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "vit-train",
		Short:         "Train Vision Transformers (ViT, DeiT) in Go",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newTrainCommand(), newFinetuneCommand(), newEvalCommand(), newPredictCommand(), newModelsCommand(), newInfoCommand(), newBenchCommand(), newPlotCommand(), newAttentionCommand(), newPosEmbedCommand(), newImportCommand(), newExportCommand(), newLogitsCommand())
	return root
}
