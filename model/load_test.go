package model_test

import (
	"slices"
	"testing"

	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
)

// tensor returns n's tensor called name.
func tensor(t *testing.T, n model.Network, name string) []float32 {
	t.Helper()
	ts := n.Tensors()
	i := slices.IndexFunc(ts, func(x safetensors.Tensor) bool { return x.Name == name })
	if i < 0 {
		t.Fatalf("model %s has no tensor %q", n.Spec().Name(), name)
	}
	return ts[i].Data
}

// Loading a network's tensors into one of the same spec for larger images
// resamples pos_embed to the new patch grid and copies every other tensor
// as it is.
func TestLoadKeepsWeightsAndResamplesPosEmbed(t *testing.T) {
	spec, err := model.Create("deit_fmnist_distilled_patch4_28", model.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	small, err := model.New(spec, 3)
	if err != nil {
		t.Fatal(err)
	}
	big, err := model.New(spec.WithInput(56, 0), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := model.Load(big, small.Tensors(), spec, false); err != nil {
		t.Fatal(err)
	}
	if tokens, _ := model.TokensOf(big.Spec()); tokens.Count != 2+196 {
		t.Fatalf("%d tokens", tokens.Count)
	}
	want, _ := vit.ResamplePosEmbed(tensor(t, small, "pos_embed"), 64, 2, 7, 7, 14, 14, vit.Bicubic)
	if got := tensor(t, big, "pos_embed"); !slices.Equal(got, want) {
		t.Fatal("pos_embed is not the resampled grid")
	}
	if !slices.Equal(tensor(t, small, "blocks.1.mlp.fc2.weight"), tensor(t, big, "blocks.1.mlp.fc2.weight")) {
		t.Fatal("weights other than pos_embed must be copied as they are")
	}
	if _, err := model.New(spec.WithInput(30, 0), 0); err == nil {
		t.Fatal("want an error for a size the patch does not divide")
	}
}
