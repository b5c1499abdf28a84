package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/resnet"
	"github.com/vit-train/vit-train/model/vit"
)

func newModelsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "models",
		Short: "List the registered models: the ViT and DeiT presets, and the ResNets",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%-36s %6s %5s %5s %5s %5s %12s\n", "name", "img", "patch", "dim", "depth", "heads", "params")
			for _, name := range vit.Presets() {
				c, err := vit.Preset(name, vit.Overrides{})
				if err != nil {
					return err
				}
				fmt.Fprintf(w, "%-36s %6d %5d %5d %5d %5d %12d\n", name, c.ImageSize, c.PatchSize, c.EmbedDim, c.Depth, c.Heads, c.ParamCount())
			}
			fmt.Fprintf(w, "ResNets (input size and classes from the data unless set): %s\n", strings.Join(resnet.Archs(), ", "))
			return nil
		},
	}
}

// modelFlags are the flags that pick a ViT preset and override its input,
// classes and shape (as model.img_size, model.patch_size, … in a config).
type modelFlags struct {
	name string
	o    model.Overrides
}

func (f *modelFlags) register(cmd *cobra.Command, def string) {
	fl := cmd.Flags()
	fl.StringVar(&f.name, "model", def, "model preset (see `vit-train models`)")
	fl.IntVar(&f.o.ImageSize, "img-size", 0, "input image size (default: the preset's)")
	fl.IntVar(&f.o.NumClasses, "num-classes", 0, "number of classes (default: the preset's)")
	fl.IntVar(&f.o.Channels, "in-chans", 0, "input channels (default: the preset's)")
	fl.IntVar(&f.o.PatchSize, "patch-size", 0, "patch size (default: the preset's)")
	fl.IntVar(&f.o.EmbedDim, "embed-dim", 0, "embedding width (default: the preset's)")
	fl.IntVar(&f.o.Depth, "depth", 0, "number of encoder blocks (default: the preset's)")
	fl.IntVar(&f.o.Heads, "num-heads", 0, "attention heads (default: the preset's)")
	fl.Float64Var(&f.o.MLPRatio, "mlp-ratio", 0, "MLP width / embedding width (default: the preset's)")
}

// config is the configuration of the ViT the flags describe.
func (f *modelFlags) config() (vit.Config, error) {
	spec, err := model.Create(f.name, f.o)
	if err != nil {
		return vit.Config{}, err
	}
	c, ok := spec.Config.(vit.Config)
	if !ok {
		return vit.Config{}, fmt.Errorf("--model %s: a ViT or DeiT preset is needed here", f.name)
	}
	return c, nil
}

// modelInfo is what `vit-train info` reports.
type modelInfo struct {
	Model          vit.Config `json:"config"`
	Params         int        `json:"params"`
	Tokens         int        `json:"tokens"`
	ForwardGMACs   float64    `json:"forward_gmacs_per_image"`
	ForwardGFLOPs  float64    `json:"forward_gflops_per_image"`
	ParamBytes     int64      `json:"param_bytes"`
	GradBytes      int64      `json:"grad_bytes"`
	AdamStateBytes int64      `json:"adam_state_bytes"`
	TrainingBytes  int64      `json:"params_grads_adam_bytes"`
}

func newInfoCommand() *cobra.Command {
	var mf modelFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info",
		Short: "Show a model's parameter count, tokens, FLOPs and memory",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := mf.config()
			if err != nil {
				return err
			}
			mem := c.Memory()
			info := modelInfo{Model: c, Params: c.ParamCount(), Tokens: c.NumTokens(),
				ForwardGMACs: float64(c.MACs()) / 1e9, ForwardGFLOPs: float64(c.ForwardFLOPs()) / 1e9,
				ParamBytes: mem.Params, GradBytes: mem.Grads, AdamStateBytes: mem.AdamState, TrainingBytes: mem.Total()}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			printInfo(cmd.OutOrStdout(), info)
			return nil
		},
	}
	mf.register(cmd, "vit_base_patch16_224")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printInfo(w io.Writer, i modelInfo) {
	c := i.Model
	kind := "ViT"
	if c.Distilled {
		kind = "DeiT (distilled)"
	}
	fmt.Fprintf(w, "model            %s (%s)\n", c.Name, kind)
	fmt.Fprintf(w, "input            %d×%d×%d, patch %d, %d classes\n", c.Channels, c.ImageSize, c.ImageSize, c.PatchSize, c.NumClasses)
	fmt.Fprintf(w, "encoder          depth %d, dim %d, MLP %d, heads %d\n", c.Depth, c.EmbedDim, c.MLPDim, c.Heads)
	fmt.Fprintf(w, "parameters       %d (%.1fM)\n", i.Params, float64(i.Params)/1e6)
	fmt.Fprintf(w, "tokens           %d (%d patches + %d prefix)\n", i.Tokens, c.NumPatches(), c.NumPrefixTokens())
	fmt.Fprintf(w, "forward/image    %.3f GMACs = %.3f GFLOPs\n", i.ForwardGMACs, i.ForwardGFLOPs)
	fmt.Fprintf(w, "memory (fp32)    params %s + grads %s + AdamW state %s = %s (activations excluded)\n",
		bytesString(i.ParamBytes), bytesString(i.GradBytes), bytesString(i.AdamStateBytes), bytesString(i.TrainingBytes))
}

func bytesString(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
