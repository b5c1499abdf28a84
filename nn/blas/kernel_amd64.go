//go:build amd64 && !openblas && !purego

package blas

import (
	"golang.org/x/sys/cpu"

	"github.com/vit-train/vit-train/nn/fmapeak"
)

//go:generate go run gen_sgemm.go
//go:generate go run gen_amx.go

// Assembly micro-kernels (sgemm_avx512_amd64.s, sgemm_avx2_amd64.s, from
// gen_sgemm.go). Each adds alpha times the product of an (mr, k) panel of A
// and a (k, nr) panel of B to beta times an (rows, nr) tile of C; see
// kernel for the operand layouts.

//go:noescape
func sgemmKernelAVX512(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint64, bias *float32)

//go:noescape
func sgemmKernelAVX512x16(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint64, bias *float32)

//go:noescape
func sgemmKernelAVX512r6(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint64, bias *float32)

//go:noescape
func sgemmKernelAVX512r6x16(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint64, bias *float32)

//go:noescape
func sgemmKernelAVX2(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint64, bias *float32)

// prefetchRows brings towards L2 every line of rows rows of width bytes,
// stride bytes apart, from p. It reads nothing and cannot fault.
//
//go:noescape
func prefetchRows(p *float32, stride, rows, width int)

// packCopyAVX512 copies rows rows of src (stride lds) into rows of
// 16·chunks floats of dst (stride ldd): chunk q is read under bits 16q..
// of lmask (zero elsewhere), the last chunk stored under smask.
//
//go:noescape
func packCopyAVX512(dst *float32, ldd int, src *float32, lds int, rows, chunks int, lmask uint64, smask uint16)

// packTransAVX512 sets dst[p·ldd + r] = src[r·lds + p] for p < k and
// r < 16 under smask, zero for r ≥ rows (which are not read).
//
//go:noescape
func packTransAVX512(dst *float32, ldd int, src *float32, lds int, rows, k int, smask uint16)

// The bfloat16 kernels (sgemm_bf16_amd64.s): the AVX-512 kernels' tiles
// with k pairs of K steps, A converted row by row to bfloat16 pairs
// (packARowsBF16, and packATRowsBF16 for Aᵀ; rsa = the row's words) and
// B packed as bfloat16 pairs (packBBF16).

//go:noescape
func sgemmKernelBF16(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint64, bias *float32)

//go:noescape
func sgemmKernelBF16x16(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint64, bias *float32)

//go:noescape
func sgemmKernelBF16r6(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint64, bias *float32)

//go:noescape
func sgemmKernelBF16r6x16(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint64, bias *float32)

// The float16 kernel (sgemm_fp16_amd64.s): 8×32 tiles, A and B packed as
// float16 (packAFP16, packBFP16), float16 sums of fp16Block steps widened
// into float32.

//go:noescape
func sgemmKernelFP16(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint64, bias *float32)

// The AMX kernel (sgemm_amx_amd64.s, from gen_amx.go): a strip of
// panels 32×32 tiles of C, each summed on four AMX tiles with TDPBF16PS,
// A converted row by row to bfloat16 pairs (rsa = the row's words), B's
// panels packed as the bfloat16 kernels pack them, panelStride words
// apart; k counts pairs, a multiple of 16. flags carries the sums of a
// K block to the next through acc (see stripFunc); one call computes
// strips strips of 32 rows, configuring the tiles once for all of them.

//go:noescape
func sgemmStripAMX(k int, a *float32, rsa int, b *float32, ldb, panelStride, panels int, c *float32, ldc int, alpha, beta float32, rows int, mask uint64, bias *float32, acc *float32, flags, strips int)

// sgemmKernelAMX is sgemmStripAMX on one tile of one K block, as a
// kernelFunc (csa is 1).
func sgemmKernelAMX(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32, rows int, mask uint64, bias *float32) {
	sgemmStripAMX(k, a, rsa, b, ldb, 0, 1, c, ldc, alpha, beta, rows, mask, bias, nil, 0, 1)
}

var (
	kernelAVX512 = &kernel{name: "avx512", mr: 12, nr: 32, masked: true, fn: sgemmKernelAVX512,
		edge:  [2][2]kernelFunc{{sgemmKernelAVX512, sgemmKernelAVX512x16}, {sgemmKernelAVX512r6, sgemmKernelAVX512r6x16}},
		packA: packAAVX512, packB: packBAVX512, kw: 1, aCol: 12, bRow: 32}
	kernelAVX2 = &kernel{name: "avx2", mr: 6, nr: 16, fn: sgemmKernelAVX2, packA: packAGo, packB: packBAVX2, kw: 1, aCol: 6, bRow: 16}
	kernelBF16 = &kernel{name: "bf16", mr: 12, nr: 32, masked: true, fn: sgemmKernelBF16,
		edge:  [2][2]kernelFunc{{sgemmKernelBF16, sgemmKernelBF16x16}, {sgemmKernelBF16r6, sgemmKernelBF16r6x16}},
		packB: packBBF16, packARows: packARowsBF16, streamARows: streamARowsBF16, packATRows: packATRowsBF16, kw: 2, aCol: 12, bRow: 32, convert: true}
	kernelFP16 = &kernel{name: "fp16", mr: 8, nr: 32, masked: true, fn: sgemmKernelFP16,
		packA: packAFP16, packB: packBFP16, kw: 1, aCol: 4, bRow: 16, convert: true}
	kernelAMX = &kernel{name: "amx", mr: 32, nr: 32, masked: true, fn: sgemmKernelAMX, strip: sgemmStripAMX,
		packB: packBAMX, packARows: packARowsBF16, streamARows: streamARowsBF16, packATRows: packATRowsBF16,
		kw: 2, aCol: 32, bRow: 32, convert: true, rowAlign: 16, kcRows: 128}
)

// packCopy16AVX2 copies rows rows of 16 floats from src (stride lds) to
// dst (stride ldd).
//
//go:noescape
func packCopy16AVX2(dst *float32, ldd int, src *float32, lds int, rows int)

// packTrans8AVX2 sets dst[p·ldd + r] = src[r·lds + p] for r < 8 and p < k,
// k a multiple of 8.
//
//go:noescape
func packTrans8AVX2(dst *float32, ldd int, src *float32, lds int, k int)

// packBAVX2 is packBGo for 16-column panels, with AVX2 copies and 8×8
// transposes of whole blocks.
func packBAVX2(dst []float32, nr int, b []float32, ldb int, tB bool, j0, cols, p0, kc int) {
	if nr != 16 || cols != 16 {
		packBGo(dst, nr, b, ldb, tB, j0, cols, p0, kc)
		return
	}
	dst = dst[:nr*kc]
	if !tB {
		_ = b[(p0+kc-1)*ldb+j0+15]
		packCopy16AVX2(&dst[0], nr, &b[p0*ldb+j0], ldb, kc)
		return
	}
	k8 := kc &^ 7
	for r0 := 0; r0 < 16; r0 += 8 {
		src := b[(j0+r0)*ldb+p0:]
		if k8 > 0 {
			_ = src[7*ldb+k8-1]
			packTrans8AVX2(&dst[r0], nr, &src[0], ldb, k8)
		}
		for r := range 8 {
			for p := k8; p < kc; p++ {
				dst[p*nr+r0+r] = src[r*ldb+p]
			}
		}
	}
}

// packAAVX512 is packAGo with AVX-512 copies and 16×16 transposes.
func packAAVX512(dst []float32, mr int, a []float32, lda int, tA bool, i0, rows, p0, kc int) {
	dst = dst[:mr*kc]
	if tA {
		packCopyRows(dst, mr, a[p0*lda+i0:], lda, kc, rows)
		return
	}
	packTransRows(dst, mr, a[i0*lda+p0:], lda, rows, kc)
}

// packBAVX512 is packBGo with AVX-512 copies and 16×16 transposes.
func packBAVX512(dst []float32, nr int, b []float32, ldb int, tB bool, j0, cols, p0, kc int) {
	dst = dst[:nr*kc]
	if !tB {
		packCopyRows(dst, nr, b[p0*ldb+j0:], ldb, kc, cols)
		return
	}
	packTransRows(dst, nr, b[j0*ldb+p0:], ldb, cols, kc)
}

// packCopyRows copies n rows of w ≤ width floats (stride ld) into dst,
// width floats a row, zero past w.
func packCopyRows(dst []float32, width int, src []float32, ld, n, w int) {
	_ = src[(n-1)*ld+w-1] // the assembly reads no further
	_ = dst[n*width-1]
	chunks := (width + 15) / 16
	last := width - 16*(chunks-1)
	packCopyAVX512(&dst[0], width, &src[0], ld, n, chunks, lowBits(w), uint16(lowBits(last)))
}

// packTransRows transposes rows ≤ width rows of k floats (stride ld)
// into dst: dst[p·width + r] = src[r·ld + p], zero for rows ≤ r < width.
func packTransRows(dst []float32, width int, src []float32, ld, rows, k int) {
	_ = src[(rows-1)*ld+k-1] // the assembly reads no further
	_ = dst[k*width-1]
	for r0 := 0; r0 < width; r0 += 16 {
		n := min(max(rows-r0, 0), 16)
		s := &src[0]
		if n > 0 {
			s = &src[r0*ld]
		}
		packTransAVX512(&dst[r0], width, s, ld, n, k, uint16(lowBits(min(16, width-r0))))
	}
}

// lowBits returns a mask of the n low bits.
func lowBits(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}

// cpuKernels lists the kernels this CPU runs, fastest first: AVX-512 needs
// the F, BW, DQ and VL extensions (and AVX2 and FMA), AVX2 needs FMA.
func cpuKernels() []*kernel {
	x := cpu.X86
	var ks []*kernel
	if x.HasAVX512F && x.HasAVX512BW && x.HasAVX512DQ && x.HasAVX512VL && x.HasAVX2 && x.HasFMA {
		ks = append(ks, kernelAVX512)
	}
	if x.HasAVX2 && x.HasFMA {
		ks = append(ks, kernelAVX2)
	}
	return ks
}

// lowKernel returns v's kernel where this CPU runs it, else nil.
func lowKernel(v Variant) *kernel { return lowKernels[v] }

// lowKernels are the low-precision kernels this CPU runs, found once: the
// bfloat16 kernel needs AVX512_BF16, the float16 one AVX512_FP16, the
// AMX one AMX-TILE and AMX-BF16 with Linux's grant of the tile data
// (fmapeak.TilesUsable), each besides the AVX-512 kernel's extensions.
var lowKernels = func() map[Variant]*kernel {
	ks := map[Variant]*kernel{}
	if !kernelAVX512.runsHere() {
		return ks
	}
	if cpu.X86.HasAVX512BF16 {
		ks[BF16] = kernelBF16
	}
	if fmapeak.Has(fmapeak.FP16) {
		ks[FP16] = kernelFP16
	}
	if fmapeak.Has(fmapeak.AMX) {
		ks[AMX] = kernelAMX
	}
	return ks
}()

// runsHere reports whether k is among cpuKernels.
func (k *kernel) runsHere() bool {
	for _, c := range cpuKernels() {
		if c == k {
			return true
		}
	}
	return false
}

// allKernels lists every float32 kernel of this build, supported by the
// CPU or not.
func allKernels() []*kernel { return []*kernel{kernelAVX512, kernelAVX2} }
