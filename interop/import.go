package interop

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/vit-train/vit-train/formats/npy"
	"github.com/vit-train/vit-train/formats/safetensors"
)

// checkpointMetaKey marks a vit-train checkpoint (train/checkpoint's File).
const checkpointMetaKey = "vit_train.model"

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
	if _, ok := file.Metadata[checkpointMetaKey]; ok {
		return nil, fmt.Errorf("already a vit-train checkpoint (metadata %q); use it as it is", checkpointMetaKey)
	}
	return FromTimm(file.Tensors, h)
}
