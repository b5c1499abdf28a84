package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/data"
	"github.com/vit-train/vit-train/formats/onnx"
	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/interop"
	"github.com/vit-train/vit-train/interop/onnxexport"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/train"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// inceptionNorm is the normalisation of Google's ViT checkpoints (timm's
// IMAGENET_INCEPTION_MEAN/STD): pixels scaled to [-1, 1].
var inceptionNorm = []float32{0.5, 0.5, 0.5}

func newImportCommand() *cobra.Command {
	var (
		from, out, preset, name, classesPath string
		h                                    interop.Hints
		mean, std                            []float32
		cropPct                              float64
		interp                               string
	)
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Convert timm (safetensors) or Google JAX (.npz) ViT weights to a vit-train checkpoint",
		Long: `Convert a timm ViT/DeiT state dict saved as safetensors (F32, F16 or BF16),
or a Google vit_jax .npz checkpoint (ViT with a class token), to a vit-train
checkpoint.

The tensor shapes give embed dim, depth, patch size, channels, image size,
classes, MLP dim, qkv bias and the distillation token. The rest comes from
--model (a preset whose architecture must match the file) or flags: --heads
(timm files do not record it; .npz files do), --img-size (resamples pos_embed
when it differs from the file's grid) and --norm-eps.

The input normalisation defaults to ImageNet's mean/std for timm files and to
0.5/0.5 (pixels in [-1, 1]) for Google checkpoints, and the evaluation
preprocessing to crop_pct 0.9 (1.0 for inputs of 384 px and more) with
bicubic resizing, as timm's ViT and DeiT pretrained configurations have
them; --mean/--std, --crop-pct and --interpolation override them. The
checkpoint records them for eval, logits, predict, attention and export.`,
		Example: `  vit-train import --from deit_tiny_patch16_224.safetensors --model deit_tiny_patch16_224 --out deit_tiny.safetensors
  vit-train import --from ViT-B_16.npz --img-size 224 --out vit_b16.safetensors`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if preset != "" {
				c, err := vit.Preset(preset, model.Overrides{})
				if err != nil {
					return err
				}
				h.Preset = &c
			}
			h.Name = name
			if name == "" && preset == "" {
				h.Name = strings.TrimSuffix(filepath.Base(from), filepath.Ext(from))
			}
			imp, err := interop.Import(from, h)
			if err != nil {
				return err
			}
			c := imp.Config
			ck := &checkpoint.File{Spec: model.SpecOf(c), Params: imp.Params}
			if ck.Mean, ck.Std, err = normalisation(imp.Format, c.Channels, mean, std); err != nil {
				return err
			}
			if ck.Eval, err = importPreprocessing(c.ImageSize, cropPct, interp); err != nil {
				return err
			}
			if ck.Classes, err = classNames(classesPath, c.NumClasses); err != nil {
				return err
			}
			if err := ck.Save(out); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "imported %s (%s) as %s: %d px, patch %d, %d channels, dim %d, depth %d, heads %d, MLP %d, %d classes, qkv bias %t, distilled %t, %d parameters\n",
				from, imp.Format, c.Name, c.ImageSize, c.PatchSize, c.Channels, c.EmbedDim, c.Depth, c.Heads, c.MLPDim, c.NumClasses, c.QKVBias, c.Distilled, c.ParamCount())
			for _, n := range imp.Notes {
				fmt.Fprintln(w, "note:", n)
			}
			fmt.Fprintf(w, "wrote %s (mean %v, std %v, crop_pct %g, %s)\n", out, ck.Mean, ck.Std, ck.Eval.CropPct, ck.Eval.Interpolation)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "timm .safetensors or Google .npz file (required)")
	f.StringVar(&out, "out", "", "checkpoint to write (required)")
	f.StringVar(&preset, "model", "", "preset the file holds (see: vit-train models): gives heads, norm eps and name")
	f.StringVar(&name, "name", "", "model name to record (default: the preset's, else the file's base name)")
	f.IntVar(&h.Heads, "heads", 0, "attention heads (needed for timm files without --model)")
	f.IntVar(&h.ImageSize, "img-size", 0, "input size (default: the file's; another size resamples pos_embed)")
	f.Float64Var(&h.LayerNormEps, "norm-eps", 0, "LayerNorm epsilon (default: the preset's, else 1e-6)")
	f.Float32SliceVar(&mean, "mean", nil, "per-channel input mean (default: by file format)")
	f.Float32SliceVar(&std, "std", nil, "per-channel input std (default: by file format)")
	f.Float64Var(&cropPct, "crop-pct", 0, "evaluation crop fraction (default: timm's, 0.9, or 1.0 from 384 px)")
	f.StringVar(&interp, "interpolation", "bicubic", "evaluation resize filter: bilinear or bicubic")
	f.StringVar(&classesPath, "classes", "", "text file with one class name per line (default: class indices)")
	cmd.MarkFlagRequired("from")
	cmd.MarkFlagRequired("out")
	return cmd
}

// normalisation returns the given mean and std, or the default for the
// format: ImageNet's for timm, 0.5/0.5 for Google's checkpoints.
func normalisation(format interop.Format, channels int, mean, std []float32) ([]float32, []float32, error) {
	if mean == nil && std == nil {
		if channels != 3 {
			return nil, nil, fmt.Errorf("the model has %d input channels: give its normalisation with --mean and --std", channels)
		}
		if format == interop.JAX {
			return inceptionNorm, inceptionNorm, nil
		}
		mean, std := data.ImageNetMeanStd()
		return mean, std, nil
	}
	if len(mean) != channels || len(std) != channels {
		return nil, nil, fmt.Errorf("--mean %v and --std %v need %d values each, one per input channel", mean, std, channels)
	}
	for i, s := range std {
		if !(s > 0) {
			return nil, nil, fmt.Errorf("--std value %d is %g, want > 0", i, s)
		}
	}
	return mean, std, nil
}

// importPreprocessing returns the evaluation preprocessing an imported
// model of size × size inputs records: cropPct and the filter interp, with
// timm's ViT and DeiT pretrained configurations' crop_pct when cropPct is
// 0: 0.9, and 1.0 for inputs of 384 px and more.
func importPreprocessing(size int, cropPct float64, interp string) (*checkpoint.Preprocessing, error) {
	p := &checkpoint.Preprocessing{CropPct: cropPct}
	if cropPct == 0 {
		p.CropPct = 0.9
		if size >= 384 {
			p.CropPct = 1
		}
	}
	var err error
	if p.Interpolation, err = augment.ParseInterp(interp); err != nil {
		return nil, fmt.Errorf("--interpolation: %w", err)
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("--crop-pct %g, --interpolation %s: %w", cropPct, interp, err)
	}
	return p, nil
}

// classNames reads one name per line from path, or numbers the classes
// when path is empty.
func classNames(path string, n int) ([]string, error) {
	if path == "" {
		names := make([]string, n)
		for i := range names {
			names[i] = strconv.Itoa(i)
		}
		return names, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	names := strings.Split(strings.TrimRight(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n"), "\n")
	if len(names) != n {
		return nil, fmt.Errorf("--classes %s has %d lines, the model has %d classes", path, len(names), n)
	}
	return names, nil
}

func newExportCommand() *cobra.Command {
	var (
		ckPath, out, format, outputs string
		ema, externalData            bool
		pre                          train.PreprocessOverrides
	)
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write a checkpoint's model as a PyTorch state dict (safetensors) or an ONNX model",
		Long: `Write a vit-train checkpoint's model weights as a safetensors file that
PyTorch loads: for a ViT, timm's VisionTransformer (VisionTransformerDistilled
for DeiT distilled models) of the same configuration with
load_state_dict(strict=True); for a ResNet, torchvision's ResNet with its
running statistics (strict=False: num_batches_tracked is not stored). timm
and torchvision names and layouts, F32, metadata {"format": "pt"}, no
optimiser state. The checkpoint's tensors are checked against the model
its metadata describes first.

With --format onnx (the default for an --out ending in .onnx), write the model as an ONNX graph (opset 17) that
computes what vit-train's evaluation graph computes, for ONNX Runtime and
other runtimes: input "pixel_values" (batch, C, H, W) with a dynamic batch
axis, output "logits" (batch, classes); for a distilled DeiT, the mean of
its two heads (DeiT's inference rule), and with --outputs both also
"cls_logits" and "dist_logits". The initializers are the checkpoint's
tensors under timm's (torchvision's) names. The model's metadata_props
record its preprocessing: the resize and crop of the checkpoint's
evaluation preprocessing (--crop-pct and --interpolation override it), the
interpolation, mean, std, image size, channels and class names. A
model over protobuf's 2 GiB limit (ViT-H) keeps its tensors in OUT.data
beside it (external data); --external-data does so for any model.`,
		Example: `  vit-train export --checkpoint runs/vit_fmnist_patch4_28/best.safetensors --out vit_fmnist.safetensors
  vit-train export --checkpoint runs/vit_fmnist_patch4_28/best.safetensors --format onnx --out vit_fmnist.onnx`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := exportFormat(out, format, cmd.Flags().Changed("format"))
			if err != nil {
				return err
			}
			switch format {
			case "safetensors":
				for _, f := range []string{"outputs", "external-data", "crop-pct", "interpolation"} {
					if cmd.Flags().Changed(f) {
						return fmt.Errorf("--%s applies to --format onnx only", f)
					}
				}
				return exportSafetensors(cmd, ckPath, out, ema)
			case "onnx":
				if outputs != "logits" && outputs != "both" {
					return fmt.Errorf("--outputs %q: want logits or both", outputs)
				}
				return exportONNX(cmd, ckPath, out, ema, pre, outputs == "both", externalData)
			}
			return fmt.Errorf("--format %q: want safetensors or onnx", format)
		},
	}
	cmd.Flags().StringVar(&ckPath, "checkpoint", "", "vit-train checkpoint (required)")
	cmd.Flags().StringVar(&out, "out", "", "file to write (required)")
	cmd.Flags().StringVar(&format, "format", "safetensors", "safetensors (a PyTorch state dict) or onnx (default: onnx for an --out ending in .onnx)")
	cmd.Flags().StringVar(&outputs, "outputs", "logits", "ONNX outputs: logits, or both to add a distilled model's two heads")
	cmd.Flags().BoolVar(&externalData, "external-data", false, "ONNX: keep the tensors in OUT.data beside the model (automatic over 2 GiB)")
	cmd.Flags().BoolVar(&ema, "ema", false, "export the EMA weights instead of the model's")
	addPreprocessFlags(cmd, &pre)
	cmd.MarkFlagRequired("checkpoint")
	cmd.MarkFlagRequired("out")
	return cmd
}

// exportNetwork opens a checkpoint's network for export, its products in
// float32 whatever its run's model.precision: an export runs none, so a
// checkpoint trained in mixed precision exports on any processor.
func exportNetwork(ckPath string, ema bool) (*train.Checkpoint, model.Network, error) {
	return train.OpenNetwork(ckPath, train.NetworkOptions{EMA: ema, Model: &train.ModelConfig{Precision: "fp32"}})
}

// exportFormat is the format export writes: --format when given (an --out
// whose extension names the other format is an error), else onnx for an
// out ending in .onnx and safetensors for any other.
func exportFormat(out, format string, given bool) (string, error) {
	ext := strings.ToLower(filepath.Ext(out))
	if !given {
		if ext == ".onnx" {
			return "onnx", nil
		}
		return "safetensors", nil
	}
	if format != "onnx" && format != "safetensors" {
		return "", fmt.Errorf("--format %q: want safetensors or onnx", format)
	}
	if (ext == ".onnx" && format != "onnx") || (ext == ".safetensors" && format != "safetensors") {
		return "", fmt.Errorf("--format %s does not match --out %s: give --format %s, or an --out ending in .%s", format, out, ext[1:], format)
	}
	return format, nil
}

func exportSafetensors(cmd *cobra.Command, ckPath, out string, ema bool) error {
	_, net, err := exportNetwork(ckPath, ema)
	if err != nil {
		return err
	}
	tensors := net.Tensors()
	if err := safetensors.WriteFileAtomic(out, tensors, map[string]string{"format": "pt"}); err != nil {
		return fmt.Errorf("export %s: %w", out, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d tensors, %d parameters\n%s\n", out, len(tensors), paramCount(net), net.Spec().Config.PyTorchLoad(out))
	return nil
}

func paramCount(net model.Network) int {
	n := 0
	for _, p := range net.Params() {
		n += len(p.Data)
	}
	return n
}

// exportONNX writes the checkpoint's network as an ONNX model at out,
// recording its evaluation preprocessing with pre's overrides, its tensors
// inline, or in out+".data" when external is set or the model is
// over protobuf's 2 GiB limit.
func exportONNX(cmd *cobra.Command, ckPath, out string, ema bool, pre train.PreprocessOverrides, bothHeads, external bool) error {
	ck, net, err := exportNetwork(ckPath, ema)
	if err != nil {
		return err
	}
	_, size := net.Spec().Input()
	evalP, err := ck.EvalPipeline(size, pre)
	if err != nil {
		return fmt.Errorf("%s: %w", ckPath, err)
	}
	m, err := onnxexport.Export(net, onnxexport.Options{BothHeads: bothHeads, Eval: evalP, Classes: ck.Classes})
	if err != nil {
		return err
	}
	dataFile := ""
	if external {
		dataFile = filepath.Base(out) + ".data"
	}
	err = onnx.WriteFile(out, m, dataFile)
	if errors.Is(err, onnx.ErrTooLarge) && !external {
		dataFile = filepath.Base(out) + ".data"
		err = onnx.WriteFile(out, m, dataFile)
	}
	if err != nil {
		return fmt.Errorf("export %s: %w", out, err)
	}
	w := cmd.OutOrStdout()
	names := make([]string, len(m.Graph.Outputs))
	for i, o := range m.Graph.Outputs {
		names[i] = o.Name
	}
	channels, _ := net.Spec().Input()
	fmt.Fprintf(w, "wrote %s: ONNX opset %d, %d nodes, %d parameters; input %s (batch, %d, %d, %d), outputs %s (batch, %d)\n",
		out, m.Opset, len(m.Graph.Nodes), paramCount(net), onnxexport.Input, channels, size, size, strings.Join(names, ", "), net.Spec().NumClasses())
	if dataFile != "" {
		fmt.Fprintf(w, "tensors in %s (external data: keep it beside the model)\n", filepath.Join(filepath.Dir(out), dataFile))
	}
	for _, p := range m.Metadata {
		if p.Key == "preprocessing" {
			fmt.Fprintf(w, "preprocessing: %s\n", p.Value)
		}
	}
	return nil
}
