package interop

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/vit-train/vit-train/formats/npy"
	"github.com/vit-train/vit-train/formats/safetensors"
	"github.com/vit-train/vit-train/model"
)

// checkpointMetaPrefix begins every metadata key of a vit-train checkpoint
// (train/checkpoint's File), and checkpointArchKey names its architecture.
const (
	checkpointMetaPrefix = "vit_train."
	checkpointArchKey    = "vit_train.arch"
)

// Import reads a timm safetensors state dict or a Google .npz checkpoint,
// told apart by their first bytes (a zip archive is an .npz), and converts
// it with FromTimm or FromJAX. Tensors stored as F16, BF16 or F64 are
// converted to float32. Errors name the file.
func Import(path string, h Hints) (*Imported, error) {
	imp, err := importFile(path, h)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", path, err)
	}
	return imp, nil
}

func importFile(path string, h Hints) (*Imported, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var head [8]byte
	n, err := f.ReadAt(head[:], 0)
	if err != nil && err != io.EOF {
		return nil, err
	}
	switch {
	case bytes.HasPrefix(head[:n], []byte("PK\x03\x04")), bytes.HasPrefix(head[:n], []byte("PK\x05\x06")):
		arrays, err := npy.DecodeNPZ(f, st.Size())
		if err != nil {
			return nil, fmt.Errorf("npz: %w", err)
		}
		return FromJAX(arrays, h)
	case bytes.HasPrefix(head[:n], []byte("\x93NUMPY")):
		return nil, fmt.Errorf("a single .npy array, not a checkpoint (want a timm .safetensors or a Google .npz file)")
	}
	file, err := safetensors.Read(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("neither a Google .npz checkpoint (zip archive) nor a valid safetensors file: %w", err)
	}
	if err := notACheckpoint(file.Metadata); err != nil {
		return nil, err
	}
	return FromTimm(file.Tensors, h)
}

// notACheckpoint refuses a vit-train checkpoint of any architecture: one
// whose metadata holds the configuration key a registered architecture
// records its networks under, or any other vit-train metadata key.
func notACheckpoint(meta map[string]string) error {
	const use = "import converts timm ViT/DeiT weights (.safetensors) and Google ViT weights (.npz); use the checkpoint as it is with train (init.from), eval, predict or export"
	for _, a := range model.Architectures() {
		if _, ok := meta[a.ConfigKey]; ok {
			return fmt.Errorf("already a vit-train checkpoint of a %s network (metadata %q): %s", a.Name, a.ConfigKey, use)
		}
	}
	for key := range meta {
		if strings.HasPrefix(key, checkpointMetaPrefix) {
			return fmt.Errorf("already a vit-train checkpoint (metadata %q, architecture %q): %s", key, meta[checkpointArchKey], use)
		}
	}
	return nil
}
