package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/vit-train/vit-train/model"
)

func newModelsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "models",
		Short: "List the registered models, architecture by architecture",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%-36s %-7s %5s %12s  %s\n", "name", "arch", "img", "params", "shape")
			for _, name := range model.Names() {
				spec, err := model.Create(name, model.Overrides{})
				if err != nil {
					return err
				}
				img, params := "data", "data"
				if _, size := spec.Input(); size > 0 {
					img = strconv.Itoa(size)
				}
				if spec.NumClasses() > 0 {
					params = strconv.Itoa(spec.Config.ParamCount())
				}
				fmt.Fprintf(w, "%-36s %-7s %5s %12s  %s\n", name, spec.Arch(), img, params, spec.Config.Summary())
			}
			fmt.Fprintln(w, "(data: the input size and class count come from the data set unless model.img_size, model.num_classes are set)")
			return nil
		},
	}
}

// modelFlags are the flags that pick a registered model and override its
// input, classes and shape (as model.img_size, model.patch_size, … in a
// config).
type modelFlags struct {
	name string
	o    model.Overrides
}

func (f *modelFlags) register(cmd *cobra.Command, def string) {
	fl := cmd.Flags()
	fl.StringVar(&f.name, "model", def, "model preset (see: vit-train models)")
	for _, o := range f.flags() {
		help := o.Help + " (default: the preset's)"
		switch p := o.Value.(type) {
		case *int:
			fl.IntVar(p, o.Flag(), 0, help)
		case *float64:
			fl.Float64Var(p, o.Flag(), 0, help)
		case *bool:
			fl.BoolVar(p, o.Flag(), false, help)
		default:
			panic(fmt.Sprintf("model.Overrides.%s: a %T has no flag", o.Key, o.Value))
		}
	}
}

// flags are the overrides that have flags: the input and the shape (a
// dropout rate changes no count or time these commands report; --set
// model.drop_rate=… sets it where it takes effect).
func (f *modelFlags) flags() []model.OverrideField {
	return append(f.o.Of(model.Input), f.o.Of(model.Shape)...)
}

// sets are the settings (model.KEY=VALUE) of the override flags the
// command line gave, in flag order.
func (f *modelFlags) sets(changed func(flag string) bool) []string {
	var out []string
	for _, o := range f.flags() {
		if changed(o.Flag()) {
			out = append(out, fmt.Sprintf("model.%s=%v", o.Key, o.Get()))
		}
	}
	return out
}

// spec is the model the flags describe.
func (f *modelFlags) spec() (model.Spec, error) { return model.Create(f.name, f.o) }

// withInput refuses a spec whose image size or class count would come from
// a data set (a ResNet preset's), for the commands that read none; unset
// channels become 3 (RGB).
func withInput(cmd string, spec model.Spec) (model.Spec, error) {
	if _, size := spec.Input(); size == 0 || spec.NumClasses() == 0 {
		return spec, fmt.Errorf("%s: model %s takes its image size and classes from the data, which %s does not read: set them (--img-size and --num-classes, or model.img_size and model.num_classes)", cmd, spec.Name(), cmd)
	}
	return spec.Resolve(3, 0, 0), nil
}

// modelInfo is what `vit-train info` reports.
type modelInfo struct {
	Config         any     `json:"config"`
	Arch           string  `json:"arch"`
	Summary        string  `json:"summary"`
	Params         int     `json:"params"`
	Tokens         int     `json:"tokens,omitempty"`
	ForwardGMACs   float64 `json:"forward_gmacs_per_image"`
	ForwardGFLOPs  float64 `json:"forward_gflops_per_image"`
	ParamBytes     int64   `json:"param_bytes"`
	GradBytes      int64   `json:"grad_bytes"`
	AdamStateBytes int64   `json:"adam_state_bytes"`
	TrainingBytes  int64   `json:"params_grads_adam_bytes"`
}

// newModelInfo describes spec's network without building it: float32
// parameters, gradients and AdamW's two moments.
func newModelInfo(spec model.Spec) modelInfo {
	c := spec.Config
	p := 4 * int64(c.ParamCount())
	i := modelInfo{Config: c, Arch: spec.Arch(), Summary: c.Summary(), Params: c.ParamCount(),
		ForwardGMACs: float64(c.ForwardFLOPs()) / 2e9, ForwardGFLOPs: float64(c.ForwardFLOPs()) / 1e9,
		ParamBytes: p, GradBytes: p, AdamStateBytes: 2 * p, TrainingBytes: 4 * p}
	if t, ok := model.TokensOf(spec); ok {
		i.Tokens = t.Count
	}
	return i
}

func newInfoCommand() *cobra.Command {
	var mf modelFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info",
		Short: "Show a model's parameter count, tokens, FLOPs and memory",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := mf.spec()
			if err != nil {
				return err
			}
			if spec, err = withInput("info", spec); err != nil {
				return err
			}
			if err := spec.Validate(); err != nil {
				return err
			}
			info := newModelInfo(spec)
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			printInfo(cmd.OutOrStdout(), spec, info)
			return nil
		},
	}
	mf.register(cmd, "vit_base_patch16_224")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printInfo(w io.Writer, spec model.Spec, i modelInfo) {
	channels, size := spec.Input()
	fmt.Fprintf(w, "model            %s (%s)\n", spec.Name(), i.Arch)
	fmt.Fprintf(w, "shape            %s\n", i.Summary)
	fmt.Fprintf(w, "input            %d×%d×%d, %d classes\n", channels, size, size, spec.NumClasses())
	fmt.Fprintf(w, "parameters       %d (%s)\n", i.Params, countString(i.Params))
	fmt.Fprintf(w, "forward/image    %.3f GMACs = %.3f GFLOPs\n", i.ForwardGMACs, i.ForwardGFLOPs)
	fmt.Fprintf(w, "memory (fp32)    params %s + grads %s + AdamW state %s = %s (activations excluded)\n",
		bytesString(i.ParamBytes), bytesString(i.GradBytes), bytesString(i.AdamStateBytes), bytesString(i.TrainingBytes))
}

// countString is a count in millions (86.6M) or, under a million, in
// thousands (16.6K).
func countString(n int) string {
	if n >= 1e6 {
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1fK", float64(n)/1e3)
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
