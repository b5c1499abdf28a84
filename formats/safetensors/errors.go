package safetensors

import (
	"fmt"
	"strings"
)

// FormatError reports a malformed file or an invalid tensor to write. It
// names the file (when known), the tensor (when the problem concerns one),
// the header field or part of the file, and what is wrong with its value.
type FormatError struct {
	File   string // path of the file; empty when reading an io.ReaderAt or writing an io.Writer
	Tensor string // tensor name; empty for problems with the file as a whole
	Field  string // e.g. "header length", "header", "dtype", "shape", "data_offsets", "__metadata__", "data"
	Msg    string
}

func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString("safetensors: ")
	if e.File != "" {
		fmt.Fprintf(&b, "%s: ", e.File)
	}
	if e.Tensor != "" {
		fmt.Fprintf(&b, "tensor %q: ", e.Tensor)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "%s: ", e.Field)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// formatErr builds a *FormatError with a formatted message.
func formatErr(file, tensor, field, format string, args ...any) error {
	return &FormatError{File: file, Tensor: tensor, Field: field, Msg: fmt.Sprintf(format, args...)}
}
