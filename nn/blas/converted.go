package blas

import "fmt"

// ConvertedA is the A operand of a GemmPacked product, A (m, k) in
// float32, row-major, converted into the rows that a low-precision
// kernel reads (bfloat16 pairs along K, for the bf16 and amx kernels),
// by the code that makes A, a part at a time while each part is in
// cache: GemmPackedConvertedThen then reads it rather than converting A
// itself. The values are those the product would convert, so the result
// is GemmPackedThen's bit for bit.
//
// Its storage comes from a pool: Reset takes it, Release gives it back.
// The zero value holds nothing.
type ConvertedA struct {
	kern   *panelKernel
	m, k   int
	stride int  // words between rows
	align  int  // K steps of one word: Convert's columns start at multiples of it
	stream bool // Convert writes with streaming stores (streamedConversionBytes)
	data   *[]float32
}

// streamedConversionBytes is the size from which a ConvertedA is written
// with streaming (non-temporal) stores, which send the words towards
// memory without first reading their cache lines in: a converted A that
// large would be pushed out of the caches before its product reads it
// anyway. Below it, the product finds a converted A in cache. On an
// Intel Xeon (family 6 model 167, 2 cores), streaming ViT-B/16's fc1
// outputs at batch 32 (39 MB) made its mixed-precision inference 7%
// faster; streaming the CIFAR model's (6.4 MB) made its inference about
// 15% slower.
const streamedConversionBytes = 32 << 20

// convertedPool holds ConvertedA's storage.
var convertedPool bufPool

// Reset readies c for A (m, k) to be read by products in v's arithmetic,
// giving back what it held, and reports whether it did: false where those
// products do not read converted rows (float32 arithmetic, a kernel that
// packs A in panels, a build without assembly kernels), c then holding
// nothing. Everything Convert does not reach (the padding the kernel
// reads past K and past the last row) is zeroed here.
func (c *ConvertedA) Reset(v Variant, m, k int) bool {
	c.Release()
	if m <= 0 || k <= 0 || v.arithmetic(k).IsFP32() || !v.Runs() {
		return false
	}
	kern := variantPanels(v)
	stride, words, align, ok := rowsLayout(kern, m, k)
	if !ok {
		return false
	}
	c.kern, c.m, c.k, c.stride, c.align = kern, m, k, stride, align
	c.stream = 4*words >= streamedConversionBytes
	c.data = convertedPool.get(words)
	zeroRowsPadding(kern, (*c.data)[:words], stride, m, k)
	return true
}

// Release gives c's storage back to the pool; c then holds nothing.
func (c *ConvertedA) Release() {
	if c.data != nil {
		convertedPool.put(c.data)
	}
	*c = ConvertedA{}
}

// Holds reports whether c holds storage for A (m, k).
func (c *ConvertedA) Holds(m, k int) bool { return c.data != nil && c.m == m && c.k == k }

// Align is the multiple of K steps at which Convert's blocks start: 2 for
// bfloat16 pairs.
func (c *ConvertedA) Align() int { return c.align }

// Convert converts the block A[i0:i1, j0:j1] of a (row stride lda, the
// same indices as A) into c. j0 is a multiple of Align, and so is j1
// unless it is k. Calls for disjoint blocks may run at once.
func (c *ConvertedA) Convert(a []float32, lda, i0, i1, j0, j1 int) {
	if c.data == nil || i0 < 0 || i0 > i1 || i1 > c.m || j0 < 0 || j0 > j1 || j1 > c.k || j0%c.align != 0 || (j1%c.align != 0 && j1 != c.k) {
		panic(fmt.Sprintf("blas: Convert of rows [%d, %d) and columns [%d, %d) of A (%d, %d) in steps of %d", i0, i1, j0, j1, c.m, c.k, c.align))
	}
	if i0 == i1 || j0 == j1 {
		return
	}
	_ = a[(i1-1)*lda+j1-1]
	convertBlock(c.kern, (*c.data)[i0*c.stride+j0/c.align:], c.stride, a[i0*lda+j0:], lda, i1-i0, j1-j0, c.stream)
}

// GemmPackedConvertedThen is GemmPackedThen(false, m, alpha, a, lda, b,
// beta, c, ldc, bias, then) reading op(A) = A from conv, which holds a
// converted: conv must hold all of a's values (m, len(b)'s k), converted
// since they last changed. Where conv is nil or was converted for
// another kernel or shape than b's product, the product converts a as
// GemmPackedThen does.
func GemmPackedConvertedThen(m int, alpha float32, a []float32, lda int, conv *ConvertedA, b *PackedB[float32], beta float32, c []float32, ldc int, bias []float32, then Then) {
	if conv != nil && (b.panels == nil || conv.kern != b.panels.packedFor() || !conv.Holds(m, b.k)) {
		conv = nil
	}
	gemmPackedThen(false, m, alpha, a, lda, conv, b, beta, c, ldc, bias, then)
}
