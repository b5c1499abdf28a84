package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/augment"
	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/optim"
)

// tinyViT is a two-block ViT small enough to save and load in
// milliseconds.
var tinyViT = vit.Config{Name: "tiny", ImageSize: 8, PatchSize: 4, Channels: 1, NumClasses: 3, EmbedDim: 8,
	Depth: 2, Heads: 2, MLPDim: 16, LayerNormEps: 1e-6, QKVBias: true}

// tinyCheckpoint returns a checkpoint of tinyViT with random weights, an
// EMA copy, run state, normalisation and class names.
func tinyCheckpoint(t testing.TB) *File {
	t.Helper()
	m, err := vit.New(tinyViT, 3)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range m.Params {
		for i := range p.Float32s() {
			p.Float32s()[i] = float32(rng.NormFloat64())
		}
	}
	ck := &File{Spec: model.SpecOf(tinyViT), RunConfig: []byte("epochs: 2\n"), State: State{Epoch: 2, Batch: 5, Step: 40, BestTop1: 61.5, BestEpoch: 1},
		Mean: []float32{0.5}, Std: []float32{0.25}, Eval: &Preprocessing{CropPct: 0.9, Interpolation: augment.Bilinear},
		Classes: []string{"a", "b", "c"}, Params: m.Tensors()}
	for _, p := range ck.Params {
		ck.EMA = append(ck.EMA, optim.Tensor{Name: "ema." + p.Name, Shape: p.Shape, Data: p.Data})
	}
	return ck
}

func saveTiny(t *testing.T, dir string) (string, *File) {
	t.Helper()
	ck := tinyCheckpoint(t)
	path := filepath.Join(dir, "last.safetensors")
	if err := ck.Save(path); err != nil {
		t.Fatal(err)
	}
	return path, ck
}

func TestCheckpointRoundTrip(t *testing.T) {
	path, want := saveTiny(t, t.TempDir())
	got, m, err := openViT(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != want.State || got.Spec != want.Spec || len(got.EMA) != len(want.EMA) || string(got.RunConfig) != "epochs: 2\n" ||
		got.Eval == nil || *got.Eval != *want.Eval {
		t.Fatalf("read back %+v", got)
	}
	for i, p := range m.Tensors() {
		if !slicesEqual(p.Data, want.Params[i].Data) {
			t.Fatalf("parameter %q differs", p.Name)
		}
	}
	if _, _, err := openViT(path, true); err != nil {
		t.Fatalf("EMA weights: %v", err)
	}
}

func slicesEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A flipped bit in a tensor's data or in the header is an error naming the
// file (and the tensor).
func TestCheckpointBitFlips(t *testing.T) {
	dir := t.TempDir()
	path, _ := saveTiny(t, dir)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := safetensors.ReadHeader(bytes.NewReader(orig), int64(len(orig)))
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "flipped.safetensors")
	rng := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		info := h.Tensors[rng.IntN(len(h.Tensors))]
		if info.End == info.Begin {
			continue
		}
		off := h.DataStart + info.Begin + rng.Int64N(info.End-info.Begin)
		b := bytes.Clone(orig)
		b[off] ^= 1 << rng.IntN(8)
		os.WriteFile(bad, b, 0o644)
		_, err := Load(bad)
		if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), `tensor "`+info.Name+`"`) || !strings.Contains(err.Error(), "corrupt") {
			t.Fatalf("data byte %d of %q flipped: %v", off, info.Name, err)
		}
	}
	for range 200 {
		off := rng.Int64N(h.DataStart)
		b := bytes.Clone(orig)
		b[off] ^= 1 << rng.IntN(8)
		os.WriteFile(bad, b, 0o644)
		if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Fatalf("header byte %d flipped: %v", off, err)
		}
	}
	if _, err := Load(path); err != nil {
		t.Fatalf("the original: %v", err)
	}
}

// rewriteHeader returns file with its header JSON changed by edit and
// without the checksum entry, as a file written before checksums were
// recorded (or edited by hand).
func rewriteHeader(t *testing.T, file []byte, edit func(h map[string]any)) []byte {
	t.Helper()
	n := binary.LittleEndian.Uint64(file)
	var h map[string]any
	if err := json.Unmarshal(file[8:8+n], &h); err != nil {
		t.Fatal(err)
	}
	delete(h["__metadata__"].(map[string]any), safetensors.ChecksumKey)
	if edit != nil {
		edit(h)
	}
	js, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	for len(js)%8 != 0 {
		js = append(js, ' ')
	}
	return append(append(binary.LittleEndian.AppendUint64(nil, uint64(len(js))), js...), file[8+n:]...)
}

func TestCheckpointWithoutChecksumsLoads(t *testing.T) {
	dir := t.TempDir()
	path, want := saveTiny(t, dir)
	orig, _ := os.ReadFile(path)
	old := filepath.Join(dir, "old.safetensors")
	os.WriteFile(old, rewriteHeader(t, orig, nil), 0o644)
	got, err := Load(old)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != want.State || len(got.Params) != len(want.Params) {
		t.Fatalf("read back %+v", got)
	}
}

// Tensors stored in another float type are converted; other types are an
// error naming the tensor, its dtype and the file, not a panic.
func TestCheckpointOtherDtypes(t *testing.T) {
	dir := t.TempDir()
	ck := tinyCheckpoint(t)
	for i := range ck.Params {
		ck.Params[i].DType = []safetensors.DType{safetensors.F16, safetensors.BF16, safetensors.F64, safetensors.F32}[i%4]
	}
	half := filepath.Join(dir, "mixed.safetensors")
	if err := ck.Save(half); err != nil {
		t.Fatal(err)
	}
	if _, _, err := openViT(half, false); err != nil {
		t.Fatalf("a checkpoint of F16, BF16 and F64 tensors: %v", err)
	}

	path, _ := saveTiny(t, dir)
	orig, _ := os.ReadFile(path)
	for _, dt := range []string{"I32", "U32"} {
		bad := filepath.Join(dir, dt+".safetensors")
		os.WriteFile(bad, rewriteHeader(t, orig, func(h map[string]any) {
			h["cls_token"].(map[string]any)["dtype"] = dt
		}), 0o644)
		_, err := Load(bad)
		for _, s := range []string{bad, `tensor "cls_token"`, dt, "cannot be converted"} {
			if err == nil || !strings.Contains(err.Error(), s) {
				t.Errorf("cls_token stored as %s: %v, want an error containing %q", dt, err, s)
			}
		}
	}
}

// Corrupt or implausible metadata is an error naming the key and value.
func TestCheckpointCorruptMetadata(t *testing.T) {
	base := savedFile(t, tinyCheckpoint(t))
	modelJSON := func(edit func(c *vit.Config)) string {
		c := tinyViT
		edit(&c)
		b, _ := json.Marshal(c)
		return string(b)
	}
	resnet := func(spec string) map[string]string {
		return map[string]string{MetaArch: "resnet", metaResNet: spec}
	}
	for _, tc := range []struct {
		name string
		meta map[string]string // entries to set; "" deletes
		drop string            // a tensor to leave out
		want []string
	}{
		{"not a checkpoint", map[string]string{metaModel: ""}, "", []string{`metadata has no "vit_train.model"`}},
		{"model not JSON", map[string]string{metaModel: "{embed"}, "", []string{`metadata "vit_train.model" is "{embed"`}},
		{"model field type", map[string]string{metaModel: `{"embed_dim":"8"}`}, "", []string{`metadata "vit_train.model"`, "embed_dim"}},
		{"huge depth", map[string]string{metaModel: modelJSON(func(c *vit.Config) { c.Depth = 1 << 40 })}, "", []string{"depth 1099511627776", "only 32 parameter tensors"}},
		{"wide embedding", map[string]string{metaModel: modelJSON(func(c *vit.Config) { c.EmbedDim, c.Heads = 1<<30, 1 })}, "", []string{`tensor "cls_token" has shape [1 1 8]`, "[1 1 1073741824]"}},
		{"huge image", map[string]string{metaModel: modelJSON(func(c *vit.Config) { c.ImageSize = 1 << 40 })}, "", []string{`tensor "pos_embed" has shape [1 5 8]`}},
		{"negative dim", map[string]string{metaModel: modelJSON(func(c *vit.Config) { c.MLPDim = -1 })}, "", []string{"mlp_dim must be positive, got -1"}},
		{"missing tensor", nil, "blocks.1.mlp.fc2.bias", []string{`tensor "blocks.1.mlp.fc2.bias" is missing`, "[8]"}},
		{"extra block", map[string]string{metaModel: modelJSON(func(c *vit.Config) { c.Depth = 1 })}, "", []string{`tensor "blocks.1.attn.proj.bias" is not a parameter`}},
		{"unknown arch", map[string]string{MetaArch: "cnn"}, "", []string{`metadata "vit_train.arch" is "cnn"`}},
		{"resnet not JSON", resnet("[]"), "", []string{`metadata "vit_train.resnet" is "[]"`}},
		{"resnet classes", resnet(`{"arch":"resnet18","in_chans":3,"img_size":32,"num_classes":1000000000}`), "", []string{"num_classes 1000000000: want 1 to"}},
		{"resnet channels", resnet(`{"arch":"resnet18","in_chans":0,"img_size":32,"num_classes":3}`), "", []string{"in_chans 0"}},
		{"resnet image", resnet(`{"arch":"resnet20","in_chans":1,"img_size":100000,"num_classes":3}`), "", []string{"img_size 100000"}},
		{"resnet arch", resnet(`{"arch":"resnet7","in_chans":1,"img_size":8,"num_classes":3}`), "", []string{`metadata "vit_train.resnet"`, "resnet7"}},
		{"resnet too big for the file", resnet(`{"arch":"resnet20","in_chans":1,"img_size":8,"num_classes":3}`), "", []string{"resnet20 with 3 classes has", "the file holds"}},
		{"state type", map[string]string{MetaState: `{"epoch":"two"}`}, "", []string{`metadata "vit_train.state"`, "epoch"}},
		{"negative batch", map[string]string{MetaState: `{"epoch":1,"batch":-3}`}, "", []string{`metadata "vit_train.state": batch is -3`}},
		{"best after now", map[string]string{MetaState: `{"epoch":1,"best_epoch":4}`}, "", []string{"best_epoch 4 is after epoch 1"}},
		{"best top1", map[string]string{MetaState: `{"epoch":1,"best_top1":250}`}, "", []string{"best_top1 is 250"}},
		{"mean and std", map[string]string{MetaStd: `[0.1, 0.2]`}, "", []string{`"vit_train.mean" has 1 values but "vit_train.std" has 2`}},
		{"zero std", map[string]string{MetaStd: `[0]`}, "", []string{`"vit_train.std" value 0 is 0`}},
		{"mean per channel", map[string]string{MetaMean: `[1,2]`, MetaStd: `[1,2]`}, "", []string{"has 2 values, want 1 or one per channel (1)"}},
		{"classes", map[string]string{MetaClasses: `["a"]`}, "", []string{`"vit_train.classes" names 1 classes, but the model has 3`}},
		{"eval not JSON", map[string]string{MetaEval: `crop`}, "", []string{`metadata "vit_train.eval" is "crop"`}},
		{"crop_pct", map[string]string{MetaEval: `{"crop_pct":1.5,"interpolation":"bicubic"}`}, "", []string{`metadata "vit_train.eval": crop_pct is 1.5, want a fraction in (0, 1]`}},
		{"no crop_pct", map[string]string{MetaEval: `{"interpolation":"bicubic"}`}, "", []string{`metadata "vit_train.eval" is`, "want both crop_pct and interpolation"}},
		{"no interpolation", map[string]string{MetaEval: `{"crop_pct":0.9}`}, "", []string{`metadata "vit_train.eval" is`, "want both crop_pct and interpolation"}},
		{"eval null", map[string]string{MetaEval: `null`}, "", []string{"want both crop_pct and interpolation"}},
		{"interpolation", map[string]string{MetaEval: `{"crop_pct":0.9,"interpolation":"nearest"}`}, "", []string{`metadata "vit_train.eval"`, `unknown interpolation "nearest"`}},
		{"random interpolation", map[string]string{MetaEval: `{"crop_pct":0.9,"interpolation":"random"}`}, "", []string{`metadata "vit_train.eval": interpolation is random, want bilinear or bicubic`}},
	} {
		f := &safetensors.File{Metadata: map[string]string{}}
		for k, v := range base.Metadata {
			f.Metadata[k] = v
		}
		for k, v := range tc.meta {
			if v == "" {
				delete(f.Metadata, k)
			} else {
				f.Metadata[k] = v
			}
		}
		for _, t := range base.Tensors {
			if t.Name != tc.drop {
				f.Tensors = append(f.Tensors, t)
			}
		}
		var err error
		if a := allocated(func() { _, err = Decode(f) }); a > 64<<20 {
			t.Errorf("%s: decoding allocated %d MB", tc.name, a>>20)
		}
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		for _, s := range tc.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not contain %q", tc.name, err, s)
			}
		}
	}

	// Through the file: the error names it.
	bad := filepath.Join(t.TempDir(), "bad.safetensors")
	meta := map[string]string{}
	for k, v := range base.Metadata {
		meta[k] = v
	}
	meta[metaModel] = modelJSON(func(c *vit.Config) { c.Depth = 1 << 40 })
	if err := safetensors.WriteFileAtomic(bad, base.Tensors, meta); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "depth") {
		t.Errorf("through the file: %v", err)
	}
	if _, _, err := openViT(bad, false); err == nil {
		t.Error("openViT accepted it")
	}
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A failed save leaves the previous checkpoint whole and nothing else.
func TestCheckpointSaveFailureKeepsThePrevious(t *testing.T) {
	dir := t.TempDir()
	path, want := saveTiny(t, dir)
	bad := tinyCheckpoint(t)
	bad.Params[0].Data = bad.Params[0].Data[:1] // does not match its shape
	err := bad.Save(path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("saving a malformed checkpoint: %v", err)
	}
	var fe *safetensors.FormatError
	if !errors.As(err, &fe) || fe.Tensor != bad.Params[0].Name {
		t.Errorf("error %v does not name tensor %q", err, bad.Params[0].Name)
	}
	got, err := Load(path)
	if err != nil || got.State != want.State {
		t.Fatalf("previous checkpoint: %+v, %v", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("folder holds %d entries, want only the checkpoint", len(entries))
	}
}

// Every proper prefix of a checkpoint is an error: every length through
// the header, then every 37th byte of the data (whose cuts all fail the
// same size check).
func TestCheckpointTruncated(t *testing.T) {
	path, _ := saveTiny(t, t.TempDir())
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := safetensors.ReadHeader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(b); n++ {
		if n > int(h.DataStart)+8 {
			n = min(n+36, len(b)-1)
		}
		f, err := safetensors.Read(bytes.NewReader(b[:n]), int64(n))
		if err == nil {
			if _, err = Decode(f); err == nil {
				t.Fatalf("checkpoint cut to %d of %d bytes accepted", n, len(b))
			}
		}
	}
}

// openViT loads the checkpoint at path into a new ViT of its spec, with
// its EMA weights when ema is set.
func openViT(path string, ema bool) (*File, model.Network, error) {
	ck, err := Load(path)
	if err != nil {
		return nil, nil, err
	}
	c, ok := ck.Spec.Config.(vit.Config)
	if !ok {
		return nil, nil, fmt.Errorf("%s holds a %s", path, ck.Spec.Arch())
	}
	m, err := c.Build(0)
	if err != nil {
		return nil, nil, err
	}
	src := ck
	if ema {
		if src, err = ck.EMAWeights(); err != nil {
			return nil, nil, err
		}
	}
	_, err = src.LoadWeights(m, false)
	return ck, m, err
}

// A file written before the evaluation preprocessing was recorded loads
// with none (train resolves today's defaults for it).
func TestCheckpointWithoutEvalPreprocessingLoads(t *testing.T) {
	ck := tinyCheckpoint(t)
	ck.Eval = nil
	f := savedFile(t, ck)
	if _, ok := f.Metadata[MetaEval]; ok {
		t.Fatalf("a checkpoint without preprocessing wrote %q", MetaEval)
	}
	got, err := Decode(f)
	if err != nil || got.Eval != nil {
		t.Fatalf("loaded %+v, %v; want no preprocessing", got, err)
	}
}

// savedFile saves ck and reads the file back.
func savedFile(t *testing.T, ck *File) *safetensors.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ck.safetensors")
	if err := ck.Save(path); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// FuzzCheckpointEval fuzzes the evaluation preprocessing's metadata value:
// whatever Decode accepts passes Check and writes back to the same value.
func FuzzCheckpointEval(f *testing.F) {
	for _, s := range []string{`{"crop_pct":0.875,"interpolation":"bicubic"}`, `{"crop_pct":1,"interpolation":"bilinear"}`,
		`{"crop_pct":0,"interpolation":"bicubic"}`, `{"crop_pct":0.9,"interpolation":"random"}`, `{"crop_pct":0.9}`, `[]`, `null`} {
		f.Add(s)
	}
	base := tinyCheckpoint(f)
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, base.Params, map[string]string{metaModel: `{"img_size":8,"patch_size":4,"in_chans":1,"num_classes":3,"embed_dim":8,"depth":2,"num_heads":2,"mlp_dim":16,"norm_eps":1e-6,"qkv_bias":true}`}); err != nil {
		f.Fatal(err)
	}
	file, err := safetensors.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, eval string) {
		g := *file
		g.Metadata = map[string]string{metaModel: file.Metadata[metaModel], MetaEval: eval}
		ck, err := Decode(&g)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if ck.Eval == nil {
			t.Fatalf("%q accepted as no preprocessing", eval)
		}
		if err := ck.Eval.Check(); err != nil {
			t.Fatalf("%q accepted, but %v", eval, err)
		}
		b, err := json.Marshal(ck.Eval)
		if err != nil {
			t.Fatal(err)
		}
		var back Preprocessing
		if err := json.Unmarshal(b, &back); err != nil || back != *ck.Eval {
			t.Fatalf("%q: %+v writes as %s, which reads back as %+v, %v", eval, *ck.Eval, b, back, err)
		}
	})
}
