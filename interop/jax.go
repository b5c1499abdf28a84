package interop

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/vit-train/vit-train/formats/npy"
	"github.com/vit-train/vit-train/formats/safetensors"
)

// jaxPrefix is where training checkpoints of vit_jax keep the parameters,
// beside the optimiser state.
const jaxPrefix = "opt/target/"

// FromJAX converts a Google ViT checkpoint in vit_jax's layout to timm's
// layout, as timm's _load_weights does:
//
//	embedding/kernel (P, P, C, D), HWIO       → patch_embed.proj.weight (D, C, P, P)
//	embedding/bias (D)                        → patch_embed.proj.bias
//	cls (1, 1, D)                             → cls_token
//	Transformer/posembed_input/pos_embedding  → pos_embed (1, T, D)
//	Transformer/encoderblock_N/
//	  LayerNorm_0/{scale, bias}               → blocks.N.norm1.{weight, bias}
//	  MultiHeadDotProductAttention_1/
//	    {query, key, value}/kernel (D, H, Dh) → blocks.N.attn.qkv.weight (3D, D)
//	    {query, key, value}/bias (H, Dh)      → blocks.N.attn.qkv.bias (3D)
//	    out/kernel (H, Dh, D), out/bias       → blocks.N.attn.proj.{weight (D, D), bias}
//	  LayerNorm_2/*                           → blocks.N.norm2.*
//	  MlpBlock_3/Dense_0/kernel (D, M), bias  → blocks.N.mlp.fc1.{weight (M, D), bias}
//	  MlpBlock_3/Dense_1/kernel (M, D), bias  → blocks.N.mlp.fc2.{weight (D, M), bias}
//	Transformer/encoder_norm/{scale, bias}    → norm.{weight, bias}
//	head/kernel (D, K), head/bias             → head.{weight (K, D), bias}
//
// Names may carry the "opt/target/" prefix of training checkpoints, whose
// other arrays (optimiser state) are then ignored. The head count comes
// from the query kernel; the rest of the architecture as for FromTimm. A
// pre_logits layer (ImageNet-21k checkpoints), a missing, misshapen or
// unexpected array is an error naming it and the shapes.
func FromJAX(arrays []npy.Array, h Hints) (*Imported, error) {
	r := jaxReader{arrays: make(map[string]npy.Array, len(arrays))}
	prefix, ignored := "", 0
	for _, a := range arrays {
		switch a.Name {
		case jaxPrefix + "embedding/kernel":
			prefix = jaxPrefix
		case "params/embedding/kernel", "params/img/embedding/kernel":
			return nil, fmt.Errorf("array %q marks a big_vision checkpoint, whose layout (pos_embedding at the top, MultiHeadDotProductAttention_0, MlpBlock_0, usually no class token) is not supported; only vit_jax's is", a.Name)
		}
	}
	for _, a := range arrays {
		name, ok := strings.CutPrefix(a.Name, prefix)
		if !ok {
			ignored++
			continue
		}
		if _, dup := r.arrays[name]; dup {
			return nil, fmt.Errorf("array %q appears twice", a.Name)
		}
		r.arrays[name] = a
	}
	tensors, heads, err := r.convert()
	if err != nil {
		return nil, err
	}
	imp, err := fromTimm(JAX, tensors, heads, h)
	if err != nil {
		return nil, err
	}
	if ignored > 0 {
		imp.Notes = append(imp.Notes, fmt.Sprintf("ignored %d arrays outside %q (optimiser state)", ignored, prefix))
	}
	return imp, nil
}

// jaxReader takes arrays out of a checkpoint by name, checking shapes and
// keeping the first error.
type jaxReader struct {
	arrays map[string]npy.Array
	err    error
}

// take removes and returns the named array, which must have the given
// shape (-1 accepts any size along a dimension).
func (r *jaxReader) take(name string, shape ...int) npy.Array {
	if r.err != nil {
		return npy.Array{}
	}
	a, ok := r.arrays[name]
	if !ok {
		r.err = fmt.Errorf("array %q is missing (want shape %v)", name, shape)
		return a
	}
	delete(r.arrays, name)
	fits := len(a.Shape) == len(shape)
	for i := 0; fits && i < len(shape); i++ {
		fits = shape[i] < 0 || a.Shape[i] == shape[i]
	}
	if !fits {
		r.err = fmt.Errorf("array %q has shape %v, want %v", name, a.Shape, shape)
	}
	return a
}

// convert returns the checkpoint as timm tensors and its head count.
func (r *jaxReader) convert() ([]safetensors.Tensor, int, error) {
	for _, name := range []string{"pre_logits/kernel", "pre_logits/bias"} {
		if a, ok := r.arrays[name]; ok {
			return nil, 0, fmt.Errorf("array %q of shape %v is a pre-logits representation layer (ImageNet-21k checkpoints), which vit-train's ViT does not have", name, a.Shape)
		}
	}
	emb := r.take("embedding/kernel", -1, -1, -1, -1)
	if r.err != nil {
		return nil, 0, r.err
	}
	p, c, d := emb.Shape[0], emb.Shape[2], emb.Shape[3]
	if emb.Shape[1] != p || len(emb.Data) == 0 {
		return nil, 0, fmt.Errorf("array %q has shape %v, want (P, P, C, D) with a square, non-empty patch", "embedding/kernel", emb.Shape)
	}
	depth, err := r.depth()
	if err != nil {
		return nil, 0, err
	}
	const mha0 = "Transformer/encoderblock_0/MultiHeadDotProductAttention_1/query/kernel"
	q0 := r.arrays[mha0]
	if len(q0.Shape) != 3 || q0.Shape[0] != d || q0.Shape[1] < 1 || q0.Shape[1]*q0.Shape[2] != d {
		return nil, 0, fmt.Errorf("array %q has shape %v, want (%d, heads, %d/heads)", mha0, q0.Shape, d, d)
	}
	heads, dh := q0.Shape[1], q0.Shape[2]
	// The MLP width and class count come from the kernels; -1 (any size)
	// is left only where the kernel is missing or not a matrix, which take
	// then reports. A width of 0 is kept, for Config.Validate to reject.
	mlp := -1
	if k, ok := r.arrays["Transformer/encoderblock_0/MlpBlock_3/Dense_0/kernel"]; ok && len(k.Shape) == 2 {
		mlp = k.Shape[1]
	}
	classes := -1
	if k, ok := r.arrays["head/kernel"]; ok && len(k.Shape) == 2 {
		classes = k.Shape[1]
	}

	var out []safetensors.Tensor
	put := func(name string, shape []int, data []float32) {
		if r.err == nil {
			out = append(out, safetensors.Tensor{Name: name, Shape: shape, Data: data})
		}
	}
	// linear stores a Dense kernel (in, out) as a Linear weight (out, in).
	linear := func(name string, kernel npy.Array, in, out int) {
		if r.err == nil {
			put(name, []int{out, in}, transpose(kernel.Data, in, out))
		}
	}
	put("patch_embed.proj.weight", []int{d, c, p, p}, hwioToOIHW(emb.Data, p, c, d))
	put("patch_embed.proj.bias", []int{d}, r.take("embedding/bias", d).Data)
	put("cls_token", []int{1, 1, d}, r.take("cls", 1, 1, d).Data)
	pos := r.take("Transformer/posembed_input/pos_embedding", 1, -1, d)
	put("pos_embed", pos.Shape, pos.Data)
	for i := 0; i < depth && r.err == nil; i++ {
		b, t := fmt.Sprintf("Transformer/encoderblock_%d/", i), fmt.Sprintf("blocks.%d.", i)
		mha := b + "MultiHeadDotProductAttention_1/"
		put(t+"norm1.weight", []int{d}, r.take(b+"LayerNorm_0/scale", d).Data)
		put(t+"norm1.bias", []int{d}, r.take(b+"LayerNorm_0/bias", d).Data)
		qkvW := make([]float32, 0, 3*d*d)
		qkvB := make([]float32, 0, 3*d)
		for _, n := range []string{"query", "key", "value"} {
			if k := r.take(mha+n+"/kernel", d, heads, dh); r.err == nil {
				qkvW = append(qkvW, transpose(k.Data, d, d)...)
			}
			qkvB = append(qkvB, r.take(mha+n+"/bias", heads, dh).Data...)
		}
		put(t+"attn.qkv.weight", []int{3 * d, d}, qkvW)
		put(t+"attn.qkv.bias", []int{3 * d}, qkvB)
		linear(t+"attn.proj.weight", r.take(mha+"out/kernel", heads, dh, d), d, d)
		put(t+"attn.proj.bias", []int{d}, r.take(mha+"out/bias", d).Data)
		put(t+"norm2.weight", []int{d}, r.take(b+"LayerNorm_2/scale", d).Data)
		put(t+"norm2.bias", []int{d}, r.take(b+"LayerNorm_2/bias", d).Data)
		linear(t+"mlp.fc1.weight", r.take(b+"MlpBlock_3/Dense_0/kernel", d, mlp), d, mlp)
		put(t+"mlp.fc1.bias", []int{mlp}, r.take(b+"MlpBlock_3/Dense_0/bias", mlp).Data)
		linear(t+"mlp.fc2.weight", r.take(b+"MlpBlock_3/Dense_1/kernel", mlp, d), mlp, d)
		put(t+"mlp.fc2.bias", []int{d}, r.take(b+"MlpBlock_3/Dense_1/bias", d).Data)
	}
	put("norm.weight", []int{d}, r.take("Transformer/encoder_norm/scale", d).Data)
	put("norm.bias", []int{d}, r.take("Transformer/encoder_norm/bias", d).Data)
	linear("head.weight", r.take("head/kernel", d, classes), d, classes)
	put("head.bias", []int{classes}, r.take("head/bias", classes).Data)
	if r.err != nil {
		return nil, 0, r.err
	}
	if len(r.arrays) > 0 {
		return nil, 0, r.unexpected()
	}
	return out, heads, nil
}

// depth is the number of Transformer/encoderblock_N groups, which must be
// numbered from 0 without gaps.
func (r *jaxReader) depth() (int, error) {
	blocks := blockIndex{}
	for name := range r.arrays {
		if rest, ok := strings.CutPrefix(name, "Transformer/encoderblock_"); ok {
			num, _, _ := strings.Cut(rest, "/")
			blocks.add(num, name)
		}
	}
	return blocks.depth("array", "Transformer/encoderblock_%d/*")
}

// unexpected reports the arrays left after conversion.
func (r *jaxReader) unexpected() error {
	names := make([]string, 0, len(r.arrays))
	for n := range r.arrays {
		names = append(names, n)
	}
	sort.Strings(names)
	var errs []error
	for _, n := range names[:min(len(names), maxProblems)] {
		errs = append(errs, fmt.Errorf("unexpected array %q of shape %v: a ViT with class-token pooling has no such parameter", n, r.arrays[n].Shape))
	}
	if len(names) > maxProblems {
		errs = append(errs, fmt.Errorf("and %d more unexpected arrays", len(names)-maxProblems))
	}
	return errors.Join(errs...)
}

// transpose returns the (cols, rows) transpose of the row-major (rows, cols) matrix a.
func transpose(a []float32, rows, cols int) []float32 {
	out := make([]float32, len(a))
	for i := range rows {
		row := a[i*cols : (i+1)*cols]
		for j, v := range row {
			out[j*rows+i] = v
		}
	}
	return out
}

// hwioToOIHW reorders a convolution kernel (P, P, C, D) to PyTorch's (D, C, P, P).
func hwioToOIHW(a []float32, p, c, d int) []float32 {
	out := make([]float32, len(a))
	for y := range p {
		for x := range p {
			for ch := range c {
				src := a[((y*p+x)*c+ch)*d:][:d]
				for o, v := range src {
					out[((o*c+ch)*p+y)*p+x] = v
				}
			}
		}
	}
	return out
}
