package checkpoint

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/resnet"
	"github.com/vit-train/vit-train/model/vit"
)

// The metadata keys the ViT and ResNet architectures register for their
// configurations.
const (
	metaModel  = "vit_train.model"
	metaResNet = "vit_train.resnet"
)

// fuzzTensorSets are the parameter sets the checkpoint fuzzer starts from:
// tinyViT's and a one-channel, three-class resnet20's.
var fuzzTensorSets = sync.OnceValues(func() ([][]safetensors.Tensor, error) {
	m, err := vit.New(tinyViT, 0)
	if err != nil {
		return nil, err
	}
	r, err := model.New(model.SpecOf(resnet.Config{Arch: "resnet20", Channels: 1, ImageSize: 8, NumClasses: 3}), 0)
	if err != nil {
		return nil, err
	}
	return [][]safetensors.Tensor{m.Tensors(), r.Tensors()}, nil
})

// FuzzCheckpointMetadata fuzzes a checkpoint's metadata — each entry a
// separate argument, absent when empty — over a parameter set that is
// either intact or edited (one tensor dropped, reshaped or moved under
// "optim." or "ema."). The file goes through safetensors encoding and
// Decode, the parse behind Load. Whatever is accepted
// must build and load: a ViT or ResNet of the recorded configuration takes
// the weights without error. The arguments stay short (the whole seed is a
// few hundred bytes) so that minimising new inputs stays fast.
func FuzzCheckpointMetadata(f *testing.F) {
	const vitJSON = `{"img_size":8,"patch_size":4,"in_chans":1,"num_classes":3,"embed_dim":8,"depth":2,"num_heads":2,"mlp_dim":16,"norm_eps":1e-6,"qkv_bias":true}`
	const state = `{"epoch":2,"batch":5,"step":40,"best_top1":61.5,"best_epoch":1}`
	const resnetJSON = `{"arch":"resnet20","in_chans":1,"img_size":8,"num_classes":3}`
	f.Add("", vitJSON, "", state, "[0.5]", "[0.25]", `["a","b","c"]`, "", uint8(0), uint16(0))
	f.Add("vit", vitJSON, "", "", "", "", "", "epochs: 3\nmodel:\n  name: vit_tiny\n", uint8(0), uint16(0x0203))
	f.Add("resnet", "", resnetJSON, state, "[0.5]", "[0.25]", "", "", uint8(1), uint16(0))
	f.Add("resnet", "", resnetJSON, "", "", "", "", "", uint8(1), uint16(0x0105))
	f.Fuzz(func(t *testing.T, arch, modelJSON, resnetJSON, state, mean, std, classes, config string, set uint8, edit uint16) {
		sets, err := fuzzTensorSets()
		if err != nil {
			t.Fatal(err)
		}
		tensors := editTensors(sets[int(set)%len(sets)], edit)
		meta := map[string]string{}
		for k, v := range map[string]string{MetaArch: arch, metaModel: modelJSON, metaResNet: resnetJSON, MetaState: state,
			MetaMean: mean, MetaStd: std, MetaClasses: classes, MetaConfig: config} {
			if v != "" {
				meta[k] = v
			}
		}
		// The metadata goes through the file format (the tensors, up to a
		// megabyte, would only slow every execution down).
		var buf bytes.Buffer
		if safetensors.Write(&buf, nil, meta) != nil {
			return // invalid UTF-8, or a value the writer reserves
		}
		file, err := safetensors.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatalf("reading a written file: %v", err)
		}
		file.Tensors = tensors
		ck, err := Decode(file)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		switch c := ck.Spec.Config.(type) {
		case vit.Config:
			m, err := c.Build(0)
			if err != nil {
				t.Fatalf("accepted model %+v does not build: %v", c, err)
			}
			if _, err := ck.LoadWeights(m, false); err != nil {
				t.Fatalf("accepted checkpoint does not load into its model: %v", err)
			}
			if len(ck.EMA) > 0 {
				if ema, err := ck.EMAWeights(); err == nil {
					ema.LoadWeights(m, false) // may fail, must not panic
				}
			}
		case resnet.Config:
			n, err := builtResNet(c)
			if err != nil {
				t.Fatalf("accepted ResNet %+v does not build: %v", c, err)
			}
			if _, err := ck.LoadWeights(n, false); err != nil {
				t.Fatalf("accepted checkpoint does not load into its ResNet: %v", err)
			}
		default:
			t.Fatalf("accepted architecture %q", ck.Spec.Arch())
		}
	})
}

// resnets caches the ResNets FuzzCheckpointMetadata builds (13 ms each),
// by what decides their parameters.
var resnets sync.Map

func builtResNet(spec resnet.Config) (model.Network, error) {
	key := resnet.Config{Arch: spec.Arch, Channels: spec.Channels, NumClasses: spec.NumClasses}
	if n, ok := resnets.Load(key); ok {
		return n.(model.Network), nil
	}
	n, err := model.New(model.SpecOf(spec), 0)
	if err == nil {
		resnets.Store(key, n)
	}
	return n, err
}

// editTensors returns a copy of tensors with tensor edit&0xff (modulo the
// count) changed by operation edit>>8 modulo 5: none, drop, reshape (a
// trailing dimension of 1), or rename under "optim." or "ema.".
func editTensors(tensors []safetensors.Tensor, edit uint16) []safetensors.Tensor {
	out := append([]safetensors.Tensor(nil), tensors...)
	i := int(edit&0xff) % len(out)
	switch (edit >> 8) % 5 {
	case 1:
		out = append(out[:i], out[i+1:]...)
	case 2:
		out[i].Shape = append(append([]int(nil), out[i].Shape...), 1)
	case 3:
		out[i].Name = "optim." + out[i].Name
	case 4:
		out[i].Name = "ema." + strings.TrimPrefix(out[i].Name, "ema.")
	}
	return out
}
