package interop

import (
	"bytes"
	"os"
	"testing"

	"github.com/vit-train/vit-train/model/interop/npy"
	"github.com/vit-train/vit-train/model/safetensors"
)

func seed(f *testing.F, name string) []byte {
	b, err := os.ReadFile(golden + name)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// checkImported asserts that accepted weights are exactly their config's
// parameters, as export needs them.
func checkImported(t *testing.T, imp *Imported) {
	if _, err := TimmStateDict(imp.Config, imp.Params); err != nil {
		t.Fatalf("accepted weights do not fit their config %+v: %v", imp.Config, err)
	}
}

// FuzzFromTimm feeds arbitrary safetensors files to FromTimm.
func FuzzFromTimm(f *testing.F) {
	f.Add(seed(f, "tiny.safetensors"), uint8(2), uint8(0))
	f.Add(seed(f, "tiny.safetensors"), uint8(1), uint8(6))
	f.Fuzz(func(t *testing.T, data []byte, heads, size uint8) {
		file, err := safetensors.Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		imp, err := FromTimm(file.Tensors, Hints{Heads: int(heads), ImageSize: int(size)})
		if err != nil {
			return
		}
		checkImported(t, imp)
	})
}

// FuzzFromJAX feeds arbitrary .npz archives to FromJAX.
func FuzzFromJAX(f *testing.F) {
	f.Add(seed(f, "tiny.npz"))
	f.Fuzz(func(t *testing.T, data []byte) {
		arrays, err := npy.DecodeNPZ(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		imp, err := FromJAX(arrays, Hints{})
		if err != nil {
			return
		}
		checkImported(t, imp)
	})
}
