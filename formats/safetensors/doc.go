// Package safetensors reads and writes the safetensors format used by
// Hugging Face and timm checkpoints:
//
//	8 bytes    N, the header length (little-endian uint64)
//	N bytes    JSON header: {"<name>": {"dtype": "F32", "shape": [..],
//	           "data_offsets": [begin, end]}, ..., "__metadata__": {..}},
//	           padded with spaces
//	rest       the data buffer; offsets are relative to its start and the
//	           tensors cover it contiguously, without holes or overlap
//
// Tensors are exchanged as []float32: the reader converts F32, F16, BF16 and
// F64 data, the writer encodes float32 data as F32, F16, BF16 or F64.
//
// Every file this package writes carries CRC-32C checksums of each tensor's
// bytes and of the header in its metadata (see ChecksumKey), and reading
// verifies them, so a flipped bit anywhere in the file is an error naming
// the tensor or header field; files without checksums read as before.
// WriteFileAtomic is the checkpoint-writing primitive: after a crash or a
// failed write (a full disk) the destination holds either the old or the
// new file, whole.
package safetensors
