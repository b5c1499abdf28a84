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
// WriteFileAtomic is the checkpoint-writing primitive: after a crash the
// destination holds either the old or the new file, whole.
package safetensors
