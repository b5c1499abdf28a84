package interop

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model/vit"
)

// Format is the kind of file weights came from.
type Format string

const (
	// Timm is a timm (PyTorch) state dict saved as safetensors.
	Timm Format = "timm safetensors"
	// JAX is a Google vit_jax / big_vision checkpoint saved as .npz.
	JAX Format = "Google JAX npz"
)

// Imported is a converted checkpoint.
type Imported struct {
	Format Format
	Config vit.Config
	// Params are the weights in Config.ParamSpecs order, with timm's names
	// and layouts, as F32 tensors.
	Params []safetensors.Tensor
	// Notes say what was done besides renaming, e.g. resampling pos_embed.
	Notes []string
}

// FromTimm converts a timm ViT or DeiT state dict: cls_token (1, 1, D),
// dist_token (1, 1, D) for DeiT distilled, pos_embed (1, T, D),
// patch_embed.proj.weight (D, C, P, P) and .bias, blocks.N.{norm1,
// attn.qkv, attn.proj, norm2, mlp.fc1, mlp.fc2}.{weight,bias} (qkv.bias
// optional), norm.*, head.* (K, D) and head_dist.* for DeiT distilled. The
// shapes give the architecture, h the rest. Any missing, misshapen or
// unexpected tensor is an error naming it and the shapes.
func FromTimm(tensors []safetensors.Tensor, h Hints) (*Imported, error) {
	return fromTimm(Timm, tensors, 0, h)
}

// fromTimm converts timm-named tensors; heads is the head count the source
// records (0 when it does not).
func fromTimm(format Format, tensors []safetensors.Tensor, heads int, h Hints) (*Imported, error) {
	arch, err := inferArch(tensors)
	if err != nil {
		return nil, err
	}
	arch.Heads = heads
	cfg, err := h.resolve(arch)
	if err != nil {
		return nil, err
	}
	params, err := matchSpecs(cfg, tensors)
	if err != nil {
		return nil, err
	}
	imp := &Imported{Format: format, Config: cfg, Params: params}
	if h.ImageSize != 0 && h.ImageSize != cfg.ImageSize {
		if err := imp.resize(h.ImageSize); err != nil {
			return nil, err
		}
	}
	return imp, nil
}

// inferArch reads the architecture off the shapes of a timm state dict;
// Heads, Name and LayerNormEps are left unset.
func inferArch(tensors []safetensors.Tensor) (vit.Config, error) {
	byName := make(map[string]safetensors.Tensor, len(tensors))
	blocks := blockIndex{}
	for _, t := range tensors {
		byName[t.Name] = t
		if rest, ok := strings.CutPrefix(t.Name, "blocks."); ok {
			num, _, _ := strings.Cut(rest, ".")
			blocks.add(num, t.Name)
		}
	}
	get := func(name string, rank int) ([]int, error) {
		t, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("tensor %q is missing; it is needed to infer the architecture", name)
		}
		if len(t.Shape) != rank {
			return nil, fmt.Errorf("tensor %q has shape %v, want %d dimensions", name, t.Shape, rank)
		}
		return t.Shape, nil
	}
	var c vit.Config
	proj, err := get("patch_embed.proj.weight", 4)
	if err != nil {
		return c, err
	}
	if proj[2] != proj[3] {
		return c, fmt.Errorf("tensor %q has shape %v: the patch is not square", "patch_embed.proj.weight", proj)
	}
	c.EmbedDim, c.Channels, c.PatchSize = proj[0], proj[1], proj[2]
	depth, err := blocks.depth("tensor", "blocks.%d.*")
	if err != nil {
		return c, err
	}
	c.Depth = depth
	fc1, err := get("blocks.0.mlp.fc1.weight", 2)
	if err != nil {
		return c, err
	}
	c.MLPDim = fc1[0]
	head, err := get("head.weight", 2)
	if err != nil {
		return c, fmt.Errorf("%w (a model without a classifier head, num_classes=0, cannot be imported)", err)
	}
	c.NumClasses = head[0]
	_, c.QKVBias = byName["blocks.0.attn.qkv.bias"]
	_, c.Distilled = byName["dist_token"]
	pos, err := get("pos_embed", 3)
	if err != nil {
		return c, err
	}
	grid, ok := squareGrid(pos[1] - c.NumPrefixTokens())
	if !ok {
		return c, fmt.Errorf("tensor %q has shape %v: %d tokens less %d prefix tokens is not a square patch grid", "pos_embed", pos, pos[1], c.NumPrefixTokens())
	}
	c.ImageSize = grid * c.PatchSize
	return c, nil
}

// blockIndex collects the block numbers that tensor names carry, each with
// the first name that carries it.
type blockIndex map[int]string

// add records the block number num (decimal digits) of the named tensor;
// anything else is left for the name checks to report.
func (b blockIndex) add(num, name string) {
	i, err := strconv.Atoi(num)
	if err != nil || i < 0 || num != strconv.Itoa(i) {
		return
	}
	if _, seen := b[i]; !seen {
		b[i] = name
	}
}

// depth returns the number of blocks, which must be numbered 0 to depth-1
// without gaps. This bounds the depth by the number of tensors, so that a
// small file cannot make the importer lay out millions of blocks. what and
// pattern name the tensors in errors ("tensor", "blocks.%d.*").
func (b blockIndex) depth(what, pattern string) (int, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("no %s %ss: the encoder has no blocks", fmt.Sprintf(pattern, 0), what)
	}
	nums := slices.Sorted(maps.Keys(b))
	for i, n := range nums {
		if n != i {
			last := nums[len(nums)-1]
			return 0, fmt.Errorf("%s %q is in block %d, but there are no %s %ss: blocks must be numbered from 0 without gaps (%d blocks found, numbered up to %d)",
				what, b[last], last, fmt.Sprintf(pattern, i), what, len(nums), last)
		}
	}
	return len(nums), nil
}

// squareGrid returns g with g² = n, for n ≥ 1.
func squareGrid(n int) (int, bool) {
	if n < 1 {
		return 0, false
	}
	g := int(math.Round(math.Sqrt(float64(n))))
	return g, g*g == n
}

// resize changes the input size to size, resampling pos_embed to the new
// patch grid.
func (imp *Imported) resize(size int) error {
	c := imp.Config
	old := c.GridSize()
	c.ImageSize = size
	if err := c.Validate(); err != nil {
		return err
	}
	var pos *safetensors.Tensor
	for i := range imp.Params {
		if imp.Params[i].Name == "pos_embed" {
			pos = &imp.Params[i]
		}
	}
	g := c.GridSize()
	data, _, err := vit.ResamplePosEmbedTensor(*pos, imp.Config, c)
	if err != nil {
		return err
	}
	pos.Data, pos.Shape = data, []int{1, c.NumTokens(), c.EmbedDim}
	imp.Notes = append(imp.Notes, fmt.Sprintf("resampled pos_embed from a %d×%d to a %d×%d patch grid for %d px input (bicubic, antialiased)", old, old, g, g, size))
	imp.Config = c
	return nil
}
