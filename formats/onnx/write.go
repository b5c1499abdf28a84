package onnx

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/vit-train/vit-train/formats/atomicfile"
)

// ErrTooLarge is the error (wrapped) of a model whose encoding exceeds
// protobuf's 2 GiB message limit: its tensors must go to an external data
// file.
var ErrTooLarge = errors.New("over protobuf's 2 GiB message limit")

// maxMessage is the largest message protobuf parsers accept.
const maxMessage = math.MaxInt32

// Write validates m and writes it to w with every tensor's values inline.
func Write(w io.Writer, m *Model) error {
	if err := m.Validate(); err != nil {
		return err
	}
	e := encodeModel(m, nil)
	if e.size > maxMessage {
		return fmt.Errorf("onnx: the model is %d bytes, %w", e.size, ErrTooLarge)
	}
	return e.writeTo(w)
}

// WriteFile validates m and writes it to path, replacing the file
// atomically (formats/atomicfile). With external empty, the tensors' values
// are inline. Otherwise every tensor of 1 KiB or more is stored in the
// file named external in path's folder (written first, also atomically),
// and the model records that name, each tensor's offset (a multiple of
// 4096) and length.
func WriteFile(path string, m *Model, external string) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var ext *externalData
	if external != "" {
		if external != filepath.Base(external) || external == "." || external == ".." {
			return fmt.Errorf("onnx: external data file %q must be a file name in the model's folder, without a path", external)
		}
		if external == filepath.Base(path) {
			return fmt.Errorf("onnx: external data file %q is the model file itself", external)
		}
		ext = &externalData{location: external}
	}
	e := encodeModel(m, ext)
	if e.size > maxMessage {
		return fmt.Errorf("onnx: %s: the model is %d bytes, %w", path, e.size, ErrTooLarge)
	}
	if ext != nil {
		data := &message{parts: ext.parts, size: ext.size}
		if err := atomicfile.Write(filepath.Join(filepath.Dir(path), external), data.writeTo); err != nil {
			return err
		}
	}
	return atomicfile.Write(path, e.writeTo)
}
