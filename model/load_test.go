package model_test

import (
	"testing"

	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
)

func TestResizedKeepsWeightsAndResamplesPosEmbed(t *testing.T) {
	cfg, _ := vit.Preset("deit_fmnist_distilled_patch4_28", model.Overrides{})
	m, err := vit.New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	resized, _, err := model.Resized(vit.AsNetwork(m), 56)
	if err != nil {
		t.Fatal(err)
	}
	big, err := vit.Of(resized)
	if err != nil {
		t.Fatal(err)
	}
	if big.Config.NumTokens() != 2+196 {
		t.Fatalf("%d tokens", big.Config.NumTokens())
	}
	want, _ := vit.ResamplePosEmbed(m.Param("pos_embed").Float32s(), 64, 2, 7, 7, 14, 14, vit.Bicubic)
	got := big.Param("pos_embed").Float32s()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("pos_embed[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	a, b := m.Param("blocks.1.mlp.fc2.weight").Float32s(), big.Param("blocks.1.mlp.fc2.weight").Float32s()
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("weights other than pos_embed must be copied as they are")
		}
	}
	if _, _, err := model.Resized(vit.AsNetwork(m), 30); err == nil {
		t.Fatal("want an error for a size the patch does not divide")
	}
}
