package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/train"
	"github.com/vit-train/vit-train/viz"
)

func newPlotCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "plot RUN_DIR",
		Short: "Draw a run's training curves (loss, top-1, lr, throughput) as PNGs in the run folder",
		Long: `Draw the training curves of a run folder from its steps.jsonl and
epochs.jsonl: loss.png (training and validation loss), top1.png (validation
and EMA top-1), lr.png (learning rate) and throughput.png (images/s), all
against the epoch. Training also redraws them after every epoch.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := plotRun(args[0])
			if err != nil {
				return err
			}
			for _, f := range files {
				fmt.Fprintln(cmd.OutOrStdout(), f)
			}
			return nil
		},
	}
}

// plotRun draws the run folder's charts and returns the files written.
func plotRun(dir string) ([]string, error) {
	read := func(name string) ([]map[string]float64, error) {
		recs, err := metrics.Read(dir, name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return recs, err
	}
	steps, err := read("steps")
	if err != nil {
		return nil, err
	}
	epochs, err := read("epochs")
	if err != nil {
		return nil, err
	}
	charts := viz.RunCharts(steps, epochs)
	if len(charts) == 0 {
		return nil, fmt.Errorf("run folder %s has no metrics to plot (steps.jsonl, epochs.jsonl)", dir)
	}
	if err := viz.PlotRun(dir, steps, epochs); err != nil {
		return nil, err
	}
	var files []string
	for _, c := range charts {
		files = append(files, filepath.Join(dir, c.File))
	}
	return files, nil
}

// redrawCharts is training's after-epoch hook: it redraws the run's charts.
func redrawCharts(dir string) error {
	_, err := plotRun(dir)
	return err
}

func newAttentionCommand() *cobra.Command {
	var (
		ckPath, method, out string
		ema                 bool
		pre                 train.PreprocessOverrides
	)
	cmd := &cobra.Command{
		Use:   "attention --checkpoint PATH IMAGE|FOLDER...",
		Short: "Draw attention maps of images: rollout from [CLS] to the patches, and the last block's heads",
		Long: `Draw, for each image, what the model attends to: the image as the model
sees it (through the checkpoint's evaluation preprocessing, as in eval and
predict; --crop-pct and --interpolation override it), the map of
the [CLS] token (and of the distillation token of a DeiT-distilled model)
over the patches, upsampled and overlaid on the image, and the last block's
per-head [CLS] maps. A folder stands for the JPEG and PNG files under it,
as in predict. Writes OUT/<image name>-attention.png, the name led by its
folder's (<folder>-<image name>) where two images share a name.

--method rollout (default) is attention rollout (Abnar & Zuidema 2020): each
block's attention averaged over heads, plus the identity for the residual,
rows renormalised, multiplied through the blocks. --method last uses the
last block's head-averaged attention. Each map is scaled from its minimum
(dark blue) to its maximum (dark red).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			meth, err := viz.ParseMethod(method)
			if err != nil {
				return err
			}
			files, err := imageArgs(args, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			written, err := drawAttention(ckPath, ema, pre, meth, out, files)
			for _, f := range written {
				fmt.Fprintln(cmd.OutOrStdout(), f)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&ckPath, "checkpoint", "", "checkpoint (required)")
	cmd.Flags().StringVar(&method, "method", string(viz.MethodRollout), "map of the prefix tokens: rollout or last")
	cmd.Flags().StringVar(&out, "out", "attention", "folder for the pictures")
	cmd.Flags().BoolVar(&ema, "ema", false, "use the EMA weights")
	addPreprocessFlags(cmd, &pre)
	_ = cmd.MarkFlagRequired("checkpoint")
	return cmd
}

// drawAttention writes one attention picture per image into out and returns
// the files written. The images go through the checkpoint's evaluation
// preprocessing with pre's overrides.
func drawAttention(ckPath string, ema bool, pre train.PreprocessOverrides, method viz.Method, out string, files []string) ([]string, error) {
	ck, n, err := train.OpenNetwork(ckPath, train.NetworkOptions{EMA: ema})
	if err != nil {
		return nil, err
	}
	spec := n.Spec()
	channels, size := spec.Input()
	ec, err := ck.EvalPreprocessing(size, pre, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ckPath, err)
	}
	// The picture shows the image before normalisation.
	mean, std := ec.Mean, ec.Std
	ec.Mean, ec.Std = nil, nil
	view, err := augment.EvalPipeline(ec)
	if err != nil {
		return nil, err
	}
	att, err := viz.NewAttender(n)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", ckPath, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	var written []string
	names := pictureNames(files)
	for i, f := range files {
		img, err := data.LoadImage(f, channels, &view)
		if err != nil {
			return written, err
		}
		input, err := data.Normalize(img, mean, std)
		if err != nil {
			return written, fmt.Errorf("%s: %w", f, err)
		}
		a, err := att.Attend(input)
		if err != nil {
			return written, fmt.Errorf("%s: %w", f, err)
		}
		best := topK(a.Logits, 1, ck.Classes)[0]
		label := best.Label
		if best.Class >= len(ck.Classes) {
			label = fmt.Sprintf("class %d", best.Class)
		}
		fig := viz.AttentionFigure{
			Title:  fmt.Sprintf("%s: %s %.1f%% (%s)", filepath.Base(f), label, 100*best.Probability, spec.Name()),
			Image:  img,
			Att:    a,
			Method: method,
		}
		path := filepath.Join(out, names[i]+"-attention.png")
		if err := fig.Save(path); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	return written, nil
}

// pictureNames names the picture of each of files: the file's name
// without its extension, led by its folder's name where another file has
// the same name (the same picture name in two class folders), and
// numbered from 2 where that still repeats, so that no picture
// overwrites another.
func pictureNames(files []string) []string {
	stem := func(f string) string { return strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)) }
	count := map[string]int{}
	for _, f := range files {
		count[stem(f)]++
	}
	names := make([]string, len(files))
	used := map[string]bool{}
	for i, f := range files {
		name := stem(f)
		if count[name] > 1 {
			name = filepath.Base(filepath.Dir(f)) + "-" + name
		}
		unique := name
		for n := 2; used[unique]; n++ {
			unique = fmt.Sprintf("%s-%d", name, n)
		}
		used[unique] = true
		names[i] = unique
	}
	return names
}

func newPosEmbedCommand() *cobra.Command {
	var (
		ckPath, out string
		ema         bool
	)
	cmd := &cobra.Command{
		Use:   "posembed --checkpoint PATH",
		Short: "Draw the cosine similarity of the position embeddings (ViT paper, figure 7)",
		Long: `Draw the cosine similarity between each patch's position embedding and
every other patch's (the [CLS]/dist rows are left out), as in figure 7 of
"An Image is Worth 16x16 Words": a G×G grid, one tile per patch, each tile
the G×G map of that patch's similarity with all patches.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := drawPosEmbed(ckPath, ema, out); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), out)
			return nil
		},
	}
	cmd.Flags().StringVar(&ckPath, "checkpoint", "", "checkpoint (required)")
	cmd.Flags().StringVar(&out, "out", "posembed.png", "PNG file to write")
	cmd.Flags().BoolVar(&ema, "ema", false, "use the EMA weights")
	_ = cmd.MarkFlagRequired("checkpoint")
	return cmd
}

// drawPosEmbed writes the position-embedding similarity picture of a
// checkpoint to out.
func drawPosEmbed(ckPath string, ema bool, out string) error {
	_, n, err := train.OpenNetwork(ckPath, train.NetworkOptions{EMA: ema})
	if err != nil {
		return err
	}
	spec := n.Spec()
	tokens, ok := model.TokensOf(spec)
	if !ok {
		return fmt.Errorf("checkpoint %s: model %s is a %s, which has no tokens to embed positions of", ckPath, spec.Name(), spec.Arch())
	}
	tensors := n.Tensors()
	i := slices.IndexFunc(tensors, func(t safetensors.Tensor) bool { return t.Name == "pos_embed" })
	if i < 0 {
		return fmt.Errorf("checkpoint %s: model %s has no pos_embed", ckPath, spec.Name())
	}
	p := tensors[i]
	if len(p.Shape) != 3 || p.Shape[0] != 1 || p.Shape[1] != tokens.Count {
		return fmt.Errorf("checkpoint %s: model %s's pos_embed has shape %v, want (1, %d, width)", ckPath, spec.Name(), p.Shape, tokens.Count)
	}
	sim, err := viz.PosEmbedSimilarity(p.Data, tokens.Count, p.Shape[2], tokens.Prefix)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("Position embedding similarity, %s", spec.Name())
	return viz.SavePosEmbedFigure(out, title, sim, tokens.Grid)
}
