package safetensors

import (
	"fmt"
	"io"

	"github.com/vit-train/vit-train/formats/atomicfile"
)

// WriteFileAtomic writes a safetensors file at path, with checksums as
// Write, so that a crash or a failed write leaves either the previous file
// or the complete new one (see atomicfile.Write): a temporary file in the
// same folder is written, fsynced and renamed over path, and the folder is
// fsynced. The file gets mode 0644. On any error, a full disk included, the
// temporary file is removed and path is untouched; errors name path.
func WriteFileAtomic(path string, tensors []Tensor, metadata map[string]string) error {
	if _, err := writeOrder(tensors, metadata, path); err != nil {
		return err
	}
	err := atomicfile.Write(path, func(w io.Writer) error { return write(w, tensors, metadata, "") })
	if err != nil {
		return fmt.Errorf("safetensors: %w", err) // atomicfile's errors name path
	}
	return nil
}
