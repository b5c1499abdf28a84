package train

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
	"github.com/vit-train/vit-train/train/checkpoint"
)

// A Checkpoint saves its Config as the file's run configuration and reads
// it back; a run configuration that does not parse is an error naming the
// file, the metadata key and the cause.
func TestCheckpointRunConfig(t *testing.T) {
	c := vit.Config{Name: "tiny", ImageSize: 8, PatchSize: 4, Channels: 1, NumClasses: 3, EmbedDim: 8,
		Depth: 1, Heads: 2, MLPDim: 16, LayerNormEps: 1e-6, QKVBias: true}
	m, err := vit.New(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Epochs = 7
	good := filepath.Join(dir, "good.safetensors")
	ck := &Checkpoint{Config: &cfg, File: checkpoint.File{Spec: model.SpecOf(c), Params: m.Tensors()}}
	if err := ck.Save(good); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCheckpoint(good)
	if err != nil {
		t.Fatal(err)
	}
	if got.Config == nil || !reflect.DeepEqual(*got.Config, cfg) {
		t.Fatalf("run configuration read back as %+v", got.Config)
	}
	for _, bad := range []struct{ yaml, want string }{
		{"epochs: [1]", "cannot unmarshal"},
		{"epochz: 1", "epochz"},
	} {
		path := filepath.Join(dir, "bad.safetensors")
		f := checkpoint.File{Spec: model.SpecOf(c), Params: m.Tensors(), RunConfig: []byte(bad.yaml)}
		if err := f.Save(path); err != nil {
			t.Fatal(err)
		}
		_, err := LoadCheckpoint(path)
		for _, s := range []string{path, `metadata "vit_train.config"`, bad.want} {
			if err == nil || !strings.Contains(err.Error(), s) {
				t.Errorf("run configuration %q: %v, want an error containing %q", bad.yaml, err, s)
			}
		}
	}
}
