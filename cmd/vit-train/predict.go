package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"github.com/spf13/cobra"

	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/nn"
	"github.com/vit-train/vit-train/train"
)

// prediction is one image's result in `vit-train predict --json`.
type prediction struct {
	File   string     `json:"file"`
	Top    []topClass `json:"top"`
	Logits []float32  `json:"logits,omitempty"`
}

type topClass struct {
	Class       int     `json:"class"`
	Label       string  `json:"label"`
	Probability float64 `json:"probability"`
}

func newPredictCommand() *cobra.Command {
	var (
		ckPath     string
		top        int
		asJSON     bool
		withLogits bool
		ema        bool
		pre        train.PreprocessOverrides
	)
	cmd := &cobra.Command{
		Use:   "predict --checkpoint PATH IMAGE|FOLDER...",
		Short: "Classify image files with a checkpoint",
		Long: `Classify JPEG or PNG files, and those under each folder named (in the
order an image folder lists them). Each image goes through the checkpoint's
evaluation preprocessing, as in eval and logits: for inputs above 32 px, the
shorter side resized to size/crop_pct and the centre cropped to the input
size; for smaller inputs, resized to the input size; then normalised with
the checkpoint's mean and std. --crop-pct and --interpolation override the
checkpoint's crop fraction and resize filter.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := imageArgs(args, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			ck, net, err := train.OpenNetwork(ckPath, train.NetworkOptions{EMA: ema})
			if err != nil {
				return err
			}
			channels, size := net.Spec().Input()
			pipeline, err := ck.EvalPipeline(size, pre)
			if err != nil {
				return fmt.Errorf("%s: %w", ckPath, err)
			}
			classes := net.Spec().NumClasses()
			batch := min(len(files), 32)
			g, err := net.Graph(batch, false, nil)
			if err != nil {
				return err
			}
			if err := g.FreezeWeights(); err != nil {
				return err
			}
			inf, err := nn.NewInference(g)
			if err != nil {
				return err
			}
			per := inf.ImageSize()
			enc := json.NewEncoder(cmd.OutOrStdout())
			for start := 0; start < len(files); start += batch {
				chunk := files[start:min(start+batch, len(files))]
				logits, err := inf.Run(len(chunk), func(img []float32) error {
					for i, f := range chunk {
						if err := data.LoadInput(f, channels, &pipeline, img[i*per:(i+1)*per]); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					return err
				}
				for i, f := range chunk {
					row := logits[i*classes : (i+1)*classes]
					p := prediction{File: f, Top: topK(row, top, ck.Classes)}
					if withLogits {
						p.Logits = append([]float32(nil), row...)
					}
					if asJSON {
						if err := enc.Encode(p); err != nil {
							return err
						}
						continue
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%s\n", f)
					for _, t := range p.Top {
						fmt.Fprintf(cmd.OutOrStdout(), "  %6.2f%%  %d %s\n", 100*t.Probability, t.Class, t.Label)
					}
					if withLogits {
						fmt.Fprintf(cmd.OutOrStdout(), "  logits %v\n", p.Logits)
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&ckPath, "checkpoint", "", "checkpoint (required)")
	cmd.Flags().IntVar(&top, "top", 5, "classes to show per image")
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per image")
	cmd.Flags().BoolVar(&withLogits, "logits", false, "also print the raw logits")
	cmd.Flags().BoolVar(&ema, "ema", false, "use the EMA weights")
	addPreprocessFlags(cmd, &pre)
	_ = cmd.MarkFlagRequired("checkpoint")
	return cmd
}

// imageArgs returns the image files args name: each file, and in place
// of each folder the JPEG and PNG files under it (data.ImageFiles). The
// image files of other formats under a folder are left out with a note
// on w; a folder with no image file to read is an error.
func imageArgs(args []string, w io.Writer) ([]string, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			files = append(files, a) // a file, or what reading it will report
			continue
		}
		found, unread, err := data.ImageFiles(a)
		if err != nil {
			return nil, err
		}
		if note := data.UnreadNote(a, unread); note != "" {
			fmt.Fprintf(w, "note: %s\n", note)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: a folder with no JPEG or PNG file under it", a)
		}
		files = append(files, found...)
	}
	return files, nil
}

// topK returns the k most probable classes of a row of logits.
func topK(logits []float32, k int, names []string) []topClass {
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = math.Max(mx, float64(v))
	}
	sum := 0.0
	probs := make([]float64, len(logits))
	for i, v := range logits {
		probs[i] = math.Exp(float64(v) - mx)
		sum += probs[i]
	}
	idx := make([]int, len(logits))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return probs[idx[a]] > probs[idx[b]] })
	k = max(1, min(k, len(idx)))
	out := make([]topClass, k)
	for i, c := range idx[:k] {
		label := fmt.Sprint(c)
		if c < len(names) {
			label = names[c]
		}
		out[i] = topClass{Class: c, Label: label, Probability: probs[c] / sum}
	}
	return out
}
