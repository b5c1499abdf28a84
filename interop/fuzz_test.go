package interop

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/formats/npy"
	"github.com/vit-train/vit-train/formats/safetensors"
)

// The import fuzzers take state dicts in a compact encoding rather than
// whole safetensors or .npz files, for two reasons.
//
// Go's fuzzing engine minimises every input that reaches new code before
// it fuzzes on, in time quadratic in the input's length (it tries removing
// every run of bytes), capped only by -fuzzminimizetime, 60 s by default.
// With the golden files as seeds (2.3 kB and 8.5 kB) the first such input,
// found within ten executions, kept the only worker minimising for the rest
// of a 45-second run, which showed as 0 execs/s. An encoded tiny ViT is
// about 100 bytes and minimises in well under a second.
//
// Mutating whole files also spends nearly every execution on the
// container: broken JSON, zip CRC mismatches. The containers have their own
// targets (safetensors.FuzzRead, npy.FuzzDecodeNPZ); these fuzz the
// conversion: names, shapes, block numbers and hints.
//
// An input is a sequence of records, one per tensor:
//
//	selector  one byte. Bit 7 puts the format's prefix before the name
//	          ("module." for timm, "opt/target/" for JAX). The low seven
//	          bits s pick the name: top[s]; or, for s - len(top) <
//	          len(block), the block tensor block[s-len(top)], whose block
//	          number follows as a uvarint; or else a literal name of n
//	          bytes, n given by the next byte.
//	rank      one byte, taken modulo 5
//	dims      rank uvarints
//
// Element i of every tensor is a small deterministic value. An input longer
// than maxFuzzInput bytes, or whose tensors would hold more than
// maxFuzzElems elements in all, is skipped, as is one that ends inside a
// record.
type stateDictCodec struct {
	prefix     string
	top        []string
	blockStart string // block tensor names are blockStart + number + blockSep + suffix
	blockSep   string
	block      []string
}

// maxFuzzElems bounds the elements of one fuzz input's tensors.
const maxFuzzElems = 1 << 16

// maxFuzzInput bounds the encoded input, as libFuzzer's -max_len does: a
// two-block ViT takes about 200 bytes, and mutated inputs of 1 to 4 kB took
// 30 to 60 seconds each to minimise.
const maxFuzzInput = 512

var timmCodec = stateDictCodec{
	prefix: "module.",
	top: []string{"cls_token", "dist_token", "pos_embed", "patch_embed.proj.weight", "patch_embed.proj.bias",
		"norm.weight", "norm.bias", "head.weight", "head.bias", "head_dist.weight", "head_dist.bias", "fc_norm.weight"},
	blockStart: "blocks.", blockSep: ".",
	block: []string{"norm1.weight", "norm1.bias", "attn.qkv.weight", "attn.qkv.bias", "attn.proj.weight", "attn.proj.bias",
		"norm2.weight", "norm2.bias", "mlp.fc1.weight", "mlp.fc1.bias", "mlp.fc2.weight", "mlp.fc2.bias"},
}

var jaxCodec = stateDictCodec{
	prefix: jaxPrefix,
	top: []string{"embedding/kernel", "embedding/bias", "cls", "Transformer/posembed_input/pos_embedding",
		"Transformer/encoder_norm/scale", "Transformer/encoder_norm/bias", "head/kernel", "head/bias",
		"pre_logits/kernel", "pre_logits/bias", "params/embedding/kernel"},
	blockStart: "Transformer/encoderblock_", blockSep: "/",
	block: []string{"LayerNorm_0/scale", "LayerNorm_0/bias",
		"MultiHeadDotProductAttention_1/query/kernel", "MultiHeadDotProductAttention_1/query/bias",
		"MultiHeadDotProductAttention_1/key/kernel", "MultiHeadDotProductAttention_1/key/bias",
		"MultiHeadDotProductAttention_1/value/kernel", "MultiHeadDotProductAttention_1/value/bias",
		"MultiHeadDotProductAttention_1/out/kernel", "MultiHeadDotProductAttention_1/out/bias",
		"LayerNorm_2/scale", "LayerNorm_2/bias",
		"MlpBlock_3/Dense_0/kernel", "MlpBlock_3/Dense_0/bias", "MlpBlock_3/Dense_1/kernel", "MlpBlock_3/Dense_1/bias"},
}

// record is one decoded tensor: its name, shape and data.
type record struct {
	name  string
	shape []int
	data  []float32
}

// decode reads the records of in; ok is false for an input to skip.
func (c stateDictCodec) decode(in []byte) (recs []record, ok bool) {
	if len(in) > maxFuzzInput {
		return nil, false
	}
	total := 0
	for len(in) > 0 {
		sel := in[0]
		in = in[1:]
		var name string
		s := int(sel & 0x7f)
		switch {
		case s < len(c.top):
			name = c.top[s]
		case s-len(c.top) < len(c.block):
			n, k := binary.Uvarint(in)
			if k <= 0 {
				return nil, false
			}
			in = in[k:]
			name = c.blockStart + strconv.FormatUint(n, 10) + c.blockSep + c.block[s-len(c.top)]
		default:
			if len(in) < 1 || len(in) < 1+int(in[0]) {
				return nil, false
			}
			name, in = string(in[1:1+int(in[0])]), in[1+int(in[0]):]
		}
		if sel&0x80 != 0 {
			name = c.prefix + name
		}
		if len(in) < 1 {
			return nil, false
		}
		rank := int(in[0] % 5)
		in = in[1:]
		shape := make([]int, rank)
		for i := range shape {
			d, k := binary.Uvarint(in)
			if k <= 0 || d > math.MaxInt {
				return nil, false
			}
			in = in[k:]
			shape[i] = int(d)
		}
		n, fits := elements(shape, maxFuzzElems-total)
		if !fits {
			return nil, false
		}
		total += n
		data := make([]float32, n)
		for i := range data {
			data[i] = float32(i*7%13-6) / 8
		}
		recs = append(recs, record{name, shape, data})
	}
	return recs, true
}

// elements is the product of shape, fits=false when it exceeds limit.
func elements(shape []int, limit int) (n int, fits bool) {
	for _, d := range shape {
		if d == 0 {
			return 0, true
		}
	}
	n = 1
	for _, d := range shape {
		if d > limit/n {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// encode is the inverse of decode, for building seeds from real files.
func (c stateDictCodec) encode(recs []record) []byte {
	var out []byte
	for _, r := range recs {
		name, sel := r.name, byte(0)
		if rest, ok := strings.CutPrefix(name, c.prefix); ok {
			name, sel = rest, 0x80
		}
		out = c.appendName(out, sel, name)
		out = append(out, byte(len(r.shape)))
		for _, d := range r.shape {
			out = binary.AppendUvarint(out, uint64(d))
		}
	}
	return out
}

func (c stateDictCodec) appendName(out []byte, sel byte, name string) []byte {
	for i, t := range c.top {
		if name == t {
			return append(out, sel|byte(i))
		}
	}
	if rest, ok := strings.CutPrefix(name, c.blockStart); ok {
		num, suffix, _ := strings.Cut(rest, c.blockSep)
		n, err := strconv.ParseUint(num, 10, 64)
		for i, b := range c.block {
			if err == nil && suffix == b && strconv.FormatUint(n, 10) == num {
				return binary.AppendUvarint(append(out, sel|byte(len(c.top)+i)), n)
			}
		}
	}
	if len(name) > 255 {
		panic(fmt.Sprintf("name %q too long to encode", name))
	}
	return append(append(out, sel|0x7f, byte(len(name))), name...)
}

func timmRecords(tensors []safetensors.Tensor) []record {
	recs := make([]record, len(tensors))
	for i, t := range tensors {
		recs[i] = record{t.Name, t.Shape, t.Data}
	}
	return recs
}

func jaxRecords(arrays []npy.Array) []record {
	recs := make([]record, len(arrays))
	for i, a := range arrays {
		recs[i] = record{a.Name, a.Shape, a.Data}
	}
	return recs
}

// checkImported asserts that accepted weights are exactly their config's
// parameters, as export needs them, and that the architecture is bounded
// by the input: no more blocks than tensors.
func checkImported(t *testing.T, imp *Imported, inputs int) {
	t.Helper()
	if _, err := matchSpecs(imp.Config, imp.Params); err != nil {
		t.Fatalf("accepted weights do not fit their config %+v: %v", imp.Config, err)
	}
	if err := imp.Config.Validate(); err != nil {
		t.Fatalf("accepted an invalid config: %v", err)
	}
	if imp.Config.Depth > inputs {
		t.Fatalf("depth %d from %d tensors", imp.Config.Depth, inputs)
	}
}

// FuzzFromTimm feeds encoded timm state dicts and hints to FromTimm.
func FuzzFromTimm(f *testing.F) {
	tiny, err := safetensors.ReadFile(golden + "tiny.safetensors")
	if err != nil {
		f.Fatal(err)
	}
	seed := timmCodec.encode(timmRecords(tiny.Tensors))
	f.Add(seed, uint8(2), uint8(0))
	f.Add(seed, uint8(1), uint8(6))
	f.Fuzz(func(t *testing.T, in []byte, heads, size uint8) {
		recs, ok := timmCodec.decode(in)
		if !ok {
			return
		}
		tensors := make([]safetensors.Tensor, len(recs))
		for i, r := range recs {
			tensors[i] = safetensors.Tensor{Name: r.name, Shape: r.shape, Data: r.data}
		}
		imp, err := FromTimm(tensors, Hints{Heads: int(heads), ImageSize: int(size)})
		if err != nil {
			return
		}
		checkImported(t, imp, len(tensors))
	})
}

// FuzzFromJAX feeds encoded vit_jax checkpoints and hints to FromJAX.
func FuzzFromJAX(f *testing.F) {
	tiny, err := npy.ReadNPZ(golden + "tiny.npz")
	if err != nil {
		f.Fatal(err)
	}
	seed := jaxCodec.encode(jaxRecords(tiny))
	f.Add(seed, uint8(0), uint8(0))
	f.Add(seed, uint8(2), uint8(6))
	f.Fuzz(func(t *testing.T, in []byte, heads, size uint8) {
		recs, ok := jaxCodec.decode(in)
		if !ok {
			return
		}
		arrays := make([]npy.Array, len(recs))
		for i, r := range recs {
			arrays[i] = npy.Array{Name: r.name, Descr: "<f4", Shape: r.shape, Data: r.data}
		}
		imp, err := FromJAX(arrays, Hints{Heads: int(heads), ImageSize: int(size)})
		if err != nil {
			return
		}
		checkImported(t, imp, len(arrays))
	})
}

// The codec round-trips real state dicts, so seeds built from files are
// those files' names and shapes.
func TestStateDictCodec(t *testing.T) {
	check := func(c stateDictCodec, recs []record) {
		t.Helper()
		enc := c.encode(recs)
		got, ok := c.decode(enc)
		if !ok || len(got) != len(recs) {
			t.Fatalf("decoded %d records (ok %v), want %d", len(got), ok, len(recs))
		}
		for i := range recs {
			if got[i].name != recs[i].name || fmt.Sprint(got[i].shape) != fmt.Sprint(recs[i].shape) {
				t.Errorf("record %d: %s %v, want %s %v", i, got[i].name, got[i].shape, recs[i].name, recs[i].shape)
			}
		}
		if len(enc) > 256 {
			t.Errorf("encoded %d records in %d bytes", len(recs), len(enc))
		}
	}
	tiny, err := safetensors.ReadFile(golden + "tiny.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	recs := timmRecords(tiny.Tensors)
	recs = append(recs, record{name: "module.blocks.1048575.norm1.weight", shape: []int{0, 1 << 40}},
		record{name: "blocks.007.norm1.weight", shape: []int{1}, data: []float32{0}},
		record{name: "odd name ü", shape: []int{}, data: []float32{0}})
	check(timmCodec, recs)
	arrays, err := npy.ReadNPZ(golden + "tiny.npz")
	if err != nil {
		t.Fatal(err)
	}
	check(jaxCodec, append(jaxRecords(arrays), record{name: "opt/target/Transformer/encoderblock_3/LayerNorm_2/bias", shape: []int{2}, data: make([]float32, 2)}))

	if _, ok := timmCodec.decode([]byte{2, 2, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f}); ok {
		t.Error("decoded a tensor of more than maxFuzzElems elements")
	}
	if _, ok := timmCodec.decode([]byte{2, 3, 1}); ok {
		t.Error("decoded a record cut inside its shape")
	}
}
