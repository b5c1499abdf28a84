package interop

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/formats/npy"
	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model"
	_ "github.com/vit-train/vit-train/model/resnet" // a ResNet checkpoint's metadata
	"github.com/vit-train/vit-train/model/vit"
)

// plainTensors returns the golden ViT's state dict (img 16, patch 4, dim 24,
// depth 2, heads 3, MLP 48, 5 classes).
func plainTensors(t *testing.T) []safetensors.Tensor {
	t.Helper()
	f, err := safetensors.ReadFile(golden + "vit_plain.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	return f.Tensors
}

// edit returns tensors without the named ones and with the added ones.
func edit(tensors []safetensors.Tensor, drop []string, add ...safetensors.Tensor) []safetensors.Tensor {
	var out []safetensors.Tensor
	for _, t := range tensors {
		if !slices.Contains(drop, t.Name) {
			out = append(out, t)
		}
	}
	return append(out, add...)
}

func wantErr(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want one containing %q", what, parts)
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not contain %q", what, err, p)
		}
	}
}

func TestFromTimmErrors(t *testing.T) {
	base := plainTensors(t)
	get := func(name string) safetensors.Tensor {
		i := slices.IndexFunc(base, func(t safetensors.Tensor) bool { return t.Name == name })
		return base[i]
	}
	h := Hints{Heads: 3}
	reshaped := get("blocks.1.attn.proj.weight")
	reshaped.Shape = []int{12, 48}
	pos := get("pos_embed")
	pos.Shape, pos.Data = []int{1, 16, 24}, pos.Data[:16*24]
	for _, tc := range []struct {
		name    string
		tensors []safetensors.Tensor
		h       Hints
		want    []string
	}{
		{"no heads", base, Hints{}, []string{"attention heads cannot be inferred", "embed_dim 24"}},
		{"heads do not divide", base, Hints{Heads: 5}, []string{"num_heads 5 does not divide embed_dim 24"}},
		{"missing", edit(base, []string{"blocks.1.mlp.fc2.bias"}), h, []string{`tensor "blocks.1.mlp.fc2.bias" is missing`, "[24]"}},
		{"one qkv bias missing", edit(base, []string{"blocks.1.attn.qkv.bias"}), h, []string{`"blocks.1.attn.qkv.bias" is missing`, "[72]"}},
		{"unexpected", edit(base, nil, safetensors.Tensor{Name: "fc_norm.weight", Shape: []int{24}, Data: make([]float32, 24)}), h,
			[]string{`unexpected tensor "fc_norm.weight" of shape [24]`}},
		{"shape", edit(base, []string{"blocks.1.attn.proj.weight"}, reshaped), h,
			[]string{`tensor "blocks.1.attn.proj.weight" has shape [12 48], model imported needs [24 24]`}},
		{"grid", edit(base, []string{"pos_embed"}, pos), h, []string{`"pos_embed" has shape [1 16 24]`, "not a square patch grid"}},
		{"no head", edit(base, []string{"head.weight", "head.bias"}), h, []string{`"head.weight" is missing`, "num_classes=0"}},
		{"no blocks", base[:0], h, []string{`"patch_embed.proj.weight" is missing`}},
		{"dist token without head_dist", edit(base, []string{"pos_embed"}, safetensors.Tensor{Name: "dist_token", Shape: []int{1, 1, 24}, Data: make([]float32, 24)},
			safetensors.Tensor{Name: "pos_embed", Shape: []int{1, 18, 24}, Data: make([]float32, 18*24)}), h,
			[]string{`tensor "head_dist.weight" is missing`, `"head_dist.bias" is missing`}},
	} {
		_, err := FromTimm(tc.tensors, tc.h)
		wantErr(t, tc.name, err, tc.want...)
	}
}

func TestFromTimmPreset(t *testing.T) {
	base := plainTensors(t)
	cifar, err := vit.Preset("vit_cifar_patch4_32", model.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = FromTimm(base, Hints{Preset: &cifar})
	wantErr(t, "wrong preset", err, "the file has embed_dim 24, preset vit_cifar_patch4_32 has 192", "depth 2", "mlp_dim 48")

	p := vit.Config{Name: "golden_plain", ImageSize: 32, PatchSize: 4, Channels: 3, NumClasses: 10, EmbedDim: 24,
		Depth: 2, Heads: 3, MLPDim: 48, LayerNormEps: 1e-5, QKVBias: true, DropPathRate: 0.1}
	imp, err := FromTimm(base, Hints{Preset: &p})
	if err != nil {
		t.Fatal(err)
	}
	c := imp.Config
	// The preset names the model and gives heads, eps and rates; the file gives image size and classes.
	if c.Name != "golden_plain" || c.Heads != 3 || c.LayerNormEps != 1e-5 || c.DropPathRate != 0.1 || c.ImageSize != 16 || c.NumClasses != 5 {
		t.Errorf("config %+v", c)
	}
	imp, err = FromTimm(base, Hints{Preset: &p, Heads: 6, Name: "mine", LayerNormEps: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	if c := imp.Config; c.Name != "mine" || c.Heads != 6 || c.LayerNormEps != 1e-3 {
		t.Errorf("explicit hints ignored: %+v", c)
	}
}

// TestFromTimmResize resamples pos_embed for another input size and keeps
// the prefix row.
func TestFromTimmResize(t *testing.T) {
	base := plainTensors(t)
	imp, err := FromTimm(base, Hints{Heads: 3, ImageSize: 24})
	if err != nil {
		t.Fatal(err)
	}
	if imp.Config.ImageSize != 24 || len(imp.Notes) != 1 || !strings.Contains(imp.Notes[0], "4×4 to a 6×6") {
		t.Fatalf("config %+v, notes %q", imp.Config, imp.Notes)
	}
	i := slices.IndexFunc(imp.Params, func(t safetensors.Tensor) bool { return t.Name == "pos_embed" })
	got := imp.Params[i]
	orig := base[slices.IndexFunc(base, func(t safetensors.Tensor) bool { return t.Name == "pos_embed" })]
	want, err := vit.ResamplePosEmbed(orig.Data, 24, 1, 4, 4, 6, 6, vit.Bicubic)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Shape, []int{1, 37, 24}) || !slices.Equal(got.Data, want) || !slices.Equal(got.Data[:24], orig.Data[:24]) {
		t.Errorf("pos_embed %v not the resampled grid", got.Shape)
	}
	if _, err := matchSpecs(imp.Config, imp.Params); err != nil {
		t.Errorf("resized weights do not fit their config: %v", err)
	}
	_, err = FromTimm(base, Hints{Heads: 3, ImageSize: 18})
	wantErr(t, "size not a multiple of the patch", err, "patch_size 4 does not divide img_size 18")
}

func goldenJAX(t *testing.T) []npy.Array {
	t.Helper()
	arrays, err := npy.ReadNPZ(golden + "vit_plain.npz")
	if err != nil {
		t.Fatal(err)
	}
	return arrays
}

func TestFromJAXTrainingPrefix(t *testing.T) {
	arrays := goldenJAX(t)
	for i := range arrays {
		arrays[i].Name = jaxPrefix + arrays[i].Name
	}
	arrays = append(arrays, npy.Array{Name: "opt/state/step", Shape: []int{}, Data: []float32{7}})
	imp, err := FromJAX(arrays, Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if len(imp.Notes) != 1 || !strings.Contains(imp.Notes[0], "ignored 1 arrays") {
		t.Errorf("notes %q", imp.Notes)
	}
	ref, err := FromJAX(goldenJAX(t), Hints{})
	if err != nil {
		t.Fatal(err)
	}
	checkSameParams(t, imp.Params, ref.Params)
}

func TestFromJAXErrors(t *testing.T) {
	with := func(f func([]npy.Array) []npy.Array) []npy.Array { return f(goldenJAX(t)) }
	rename := func(from, to string) []npy.Array {
		return with(func(a []npy.Array) []npy.Array {
			for i := range a {
				if a[i].Name == from {
					a[i].Name = to
				}
			}
			return a
		})
	}
	reshape := func(name string, shape ...int) []npy.Array {
		return with(func(a []npy.Array) []npy.Array {
			for i := range a {
				if a[i].Name == name {
					a[i].Shape = shape
				}
			}
			return a
		})
	}
	extra := func(name string, shape ...int) []npy.Array {
		return with(func(a []npy.Array) []npy.Array {
			return append(a, npy.Array{Name: name, Shape: shape, Data: make([]float32, 24)})
		})
	}
	const q1 = "Transformer/encoderblock_1/MultiHeadDotProductAttention_1/query/kernel"
	for _, tc := range []struct {
		name   string
		arrays []npy.Array
		h      Hints
		want   []string
	}{
		{"heads disagree", goldenJAX(t), Hints{Heads: 2}, []string{"the file has 3 attention heads, not 2"}},
		{"pre_logits", extra("pre_logits/bias", 24), Hints{}, []string{`"pre_logits/bias" of shape [24] is a pre-logits representation layer`}},
		{"missing", rename("Transformer/encoderblock_1/LayerNorm_2/scale", "elsewhere"), Hints{},
			[]string{`array "Transformer/encoderblock_1/LayerNorm_2/scale" is missing (want shape [24])`}},
		{"unexpected", extra("Transformer/encoderblock_0/LayerScale/gamma", 24), Hints{}, []string{`unexpected array "Transformer/encoderblock_0/LayerScale/gamma" of shape [24]`}},
		{"kernel shape", reshape(q1, 24, 8, 3), Hints{}, []string{`array "` + q1 + `" has shape [24 8 3], want [24 3 8]`}},
		{"head count", reshape("Transformer/encoderblock_0/MultiHeadDotProductAttention_1/query/kernel", 24, 576), Hints{}, []string{"want (24, heads, 24/heads)"}},
		{"patch", reshape("embedding/kernel", 4, 2, 6, 24), Hints{}, []string{`"embedding/kernel" has shape [4 2 6 24]`, "square"}},
		{"no embedding", rename("embedding/kernel", "x"), Hints{}, []string{`array "embedding/kernel" is missing`}},
		{"big_vision", rename("embedding/kernel", "params/embedding/kernel"), Hints{}, []string{`"params/embedding/kernel" marks a big_vision checkpoint`}},
		// Zero-width kernels once panicked in transpose.
		{"zero classes", with(func(a []npy.Array) []npy.Array {
			for i := range a {
				switch a[i].Name {
				case "head/kernel":
					a[i].Shape, a[i].Data = []int{24, 0}, nil
				case "head/bias":
					a[i].Shape, a[i].Data = []int{0}, nil
				}
			}
			return a
		}), Hints{}, []string{"num_classes must be positive, got 0"}},
		{"zero MLP width", reshape("Transformer/encoderblock_0/MlpBlock_3/Dense_0/kernel", 24, 0), Hints{}, []string{
			`array "Transformer/encoderblock_0/MlpBlock_3/Dense_0/bias" has shape [48], want [0]`}},
	} {
		_, err := FromJAX(tc.arrays, tc.h)
		wantErr(t, tc.name, err, tc.want...)
	}
}

func TestImportFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ckpt := filepath.Join(dir, "ckpt.safetensors")
	if err := safetensors.WriteFileAtomic(ckpt, plainTensors(t), map[string]string{"vit_train.model": "{}"}); err != nil {
		t.Fatal(err)
	}
	// A ResNet checkpoint's metadata, as train/checkpoint writes it.
	resnet20, err := model.Create("resnet20", model.Overrides{NumClasses: 10})
	if err != nil {
		t.Fatal(err)
	}
	key, spec, err := model.EncodeConfig(resnet20)
	if err != nil {
		t.Fatal(err)
	}
	resnetCkpt := filepath.Join(dir, "resnet.safetensors")
	if err := safetensors.WriteFileAtomic(resnetCkpt, plainTensors(t), map[string]string{"vit_train.arch": "resnet", key: string(spec)}); err != nil {
		t.Fatal(err)
	}
	// A checkpoint of an architecture this program has not registered.
	otherCkpt := filepath.Join(dir, "other.safetensors")
	if err := safetensors.WriteFileAtomic(otherCkpt, plainTensors(t), map[string]string{"vit_train.arch": "tinycnn", "vit_train.tinycnn": "{}"}); err != nil {
		t.Fatal(err)
	}
	npyFile, err := os.ReadFile(golden + "f4_2x3.npy")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{filepath.Join(dir, "missing.safetensors"), []string{"missing.safetensors", "no such file"}},
		{write("a.npy", npyFile), []string{"a.npy", "a single .npy array"}},
		{write("junk.bin", []byte("hello, world")), []string{"junk.bin", "neither a Google .npz", "safetensors"}},
		{write("empty.npz", nil), []string{"empty.npz", "neither"}},
		{write("bad.npz", []byte("PK\x03\x04 truncated")), []string{"bad.npz", "npz: not a valid zip archive"}},
		{ckpt, []string{"ckpt.safetensors", "already a vit-train checkpoint of a vit network", "use the checkpoint as it is"}},
		{resnetCkpt, []string{"resnet.safetensors", "already a vit-train checkpoint of a resnet network", `"vit_train.resnet"`, "timm ViT/DeiT weights"}},
		{otherCkpt, []string{"other.safetensors", "already a vit-train checkpoint", `"tinycnn"`, "Google ViT weights (.npz)"}},
	} {
		_, err := Import(tc.path, Hints{Heads: 3})
		wantErr(t, tc.path, err, tc.want...)
	}
}

func TestMatchSpecsErrors(t *testing.T) {
	imp, err := FromTimm(plainTensors(t), Hints{Heads: 3})
	if err != nil {
		t.Fatal(err)
	}
	extra := append(slices.Clone(imp.Params), safetensors.Tensor{Name: "optim.m.head.bias", Shape: []int{5}, Data: make([]float32, 5)})
	_, err = matchSpecs(imp.Config, extra)
	wantErr(t, "extra", err, `unexpected tensor "optim.m.head.bias"`)
	_, err = matchSpecs(imp.Config, imp.Params[1:])
	wantErr(t, "missing", err, `tensor "cls_token" is missing`)
	_, err = matchSpecs(imp.Config, append(slices.Clone(imp.Params), imp.Params[0]))
	wantErr(t, "twice", err, `tensor "cls_token" appears twice`)
}
