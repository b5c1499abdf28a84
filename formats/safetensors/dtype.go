package safetensors

// DType is a safetensors element type, spelled as in the header.
type DType string

// The element types of the safetensors format.
const (
	Bool    DType = "BOOL"
	U8      DType = "U8"
	I8      DType = "I8"
	F8E5M2  DType = "F8_E5M2"
	F8E4M3  DType = "F8_E4M3"
	F8E8M0  DType = "F8_E8M0"
	I16     DType = "I16"
	U16     DType = "U16"
	F16     DType = "F16"
	BF16    DType = "BF16"
	I32     DType = "I32"
	U32     DType = "U32"
	F32     DType = "F32"
	F64     DType = "F64"
	I64     DType = "I64"
	U64     DType = "U64"
	Complex DType = "C64"
)

// dtypeSizes is the element size in bytes of every known dtype.
var dtypeSizes = map[DType]int{
	Bool: 1, U8: 1, I8: 1, F8E5M2: 1, F8E4M3: 1, F8E8M0: 1,
	I16: 2, U16: 2, F16: 2, BF16: 2,
	I32: 4, U32: 4, F32: 4,
	F64: 8, I64: 8, U64: 8, Complex: 8,
}

// Size returns the element size in bytes, or 0 for an unknown dtype.
func (d DType) Size() int { return dtypeSizes[d] }

// Float reports whether tensors of this dtype convert to and from float32
// (F32, F16, BF16 and F64).
func (d DType) Float() bool {
	return d == F32 || d == F16 || d == BF16 || d == F64
}

// writeRank orders dtypes in a written file like the reference
// implementation, which sorts by its dtype enum in descending order (wider
// types first, so every tensor stays aligned), then by name.
func (d DType) writeRank() int {
	switch d {
	case F64:
		return 3
	case F32:
		return 2
	case BF16:
		return 1
	}
	return 0 // F16
}
