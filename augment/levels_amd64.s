//go:build amd64 && !purego

#include "textflag.h"

DATA levelsconst<>+0(SB)/4, $255.0
DATA levelsconst<>+4(SB)/4, $0.5
DATA levelsconst<>+8(SB)/4, $0x3b808081 // float32(1)/255
GLOBL levelsconst<>(SB), RODATA|NOPTR, $12

// VALUE sets v to l/255 for levels l widened to float32 (l is clobbered),
// r holding 1/255 and k 255: q = l·r, then one correction step, q +
// (l - 255·q)·r, the residual and the step each fused and rounded once.
// That is the quotient VDIVPS gives (levelValue's) for each of the 256
// levels (TestRows8LevelsMatchesGeneric and TestNormLevelsMatchesNormalize
// check them all), at a fraction of a division's cost.
#define VALUE(l, v, r, k) \
	VMULPS       r, l, v; \
	VFNMADD231PS k, v, l; \
	VFMADD231PS  r, l, v

// func levelsAVX2(dst *uint8, src *float32, n int)
//
// dst[i] = src[i]·255 + 0.5 clamped to [0, 255] (NaN to 0) and truncated,
// for i < n (a positive multiple of 16): the product and the sum each
// rounded to float32, as levelOf computes it.
TEXT ·levelsAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS levelsconst<>+0(SB), Y14
	VBROADCASTSS levelsconst<>+4(SB), Y15
	VXORPS Y13, Y13, Y13

levels16:
	VMULPS (SI), Y14, Y0
	VMULPS 32(SI), Y14, Y1
	VADDPS Y15, Y0, Y0
	VADDPS Y15, Y1, Y1
	VMAXPS Y13, Y0, Y0 // NaN gives the second operand, 0
	VMAXPS Y13, Y1, Y1
	VMINPS Y14, Y0, Y0
	VMINPS Y14, Y1, Y1
	VCVTTPS2DQ Y0, Y0
	VCVTTPS2DQ Y1, Y1
	// Packing to 16 bits works within each 128-bit lane; the quadword
	// permutation restores the order.
	VPACKSSDW Y1, Y0, Y2
	VPERMQ $0xD8, Y2, Y2
	VEXTRACTI128 $1, Y2, X3
	VPACKUSWB X3, X2, X4
	VMOVDQU X4, (DI)
	ADDQ $64, SI
	ADDQ $16, DI
	SUBQ $16, CX
	JGT  levels16
	VZEROUPPER
	RET

// func normLevelsAVX2(dst *float32, src *uint8, n int, mean, inv float32)
//
// dst[i] = (float32(src[i])/255 - mean)·inv for i < n (a positive
// multiple of 8), the subtraction and the product each rounded to float32
// (not fused) after the division (VALUE's), as normLevelsGeneric computes
// it.
TEXT ·normLevelsAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS levelsconst<>+8(SB), Y12
	VBROADCASTSS levelsconst<>+0(SB), Y13
	VBROADCASTSS mean+24(FP), Y14
	VBROADCASTSS inv+28(FP), Y15

norm8:
	VPMOVZXBD (SI), Y0
	VCVTDQ2PS Y0, Y0
	VALUE(Y0, Y1, Y12, Y13)
	VSUBPS Y14, Y1, Y1
	VMULPS Y15, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $8, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JGT  norm8
	VZEROUPPER
	RET

// func rows8AVX2(inter *float32, pix *uint8, n, stride int)
//
// inter[x·8+r] = float32(pix[r·stride+x])/255 for the 8 rows r and x < n
// (a positive multiple of 8): each 8×8 block of levels transposed, then
// widened and divided (VALUE: exactly, as levelValue holds them).
TEXT ·rows8AVX2(SB), NOSPLIT, $64-32
	MOVQ inter+0(FP), DI
	MOVQ pix+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ stride+24(FP), R8
	LEAQ (R8)(R8*2), R9 // 3·stride
	LEAQ (SI)(R8*4), R10 // row 4
	VBROADCASTSS levelsconst<>+8(SB), Y14
	VBROADCASTSS levelsconst<>+0(SB), Y15

block8:
	VMOVQ (SI), X0
	VMOVQ (SI)(R8*1), X1
	VMOVQ (SI)(R8*2), X2
	VMOVQ (SI)(R9*1), X3
	VMOVQ (R10), X4
	VMOVQ (R10)(R8*1), X5
	VMOVQ (R10)(R8*2), X6
	VMOVQ (R10)(R9*1), X7
	// Bytes of row pairs, then words of row quadruples, then the dwords
	// of all eight: each 64-bit half is one column's eight rows.
	VPUNPCKLBW X1, X0, X0
	VPUNPCKLBW X3, X2, X2
	VPUNPCKLBW X5, X4, X4
	VPUNPCKLBW X7, X6, X6
	VPUNPCKHWD X2, X0, X1
	VPUNPCKLWD X2, X0, X0
	VPUNPCKHWD X6, X4, X5
	VPUNPCKLWD X6, X4, X4
	VPUNPCKLDQ X4, X0, X8
	VPUNPCKHDQ X4, X0, X9
	VPUNPCKLDQ X5, X1, X10
	VPUNPCKHDQ X5, X1, X11
	VMOVDQU X8, 0(SP)
	VMOVDQU X9, 16(SP)
	VMOVDQU X10, 32(SP)
	VMOVDQU X11, 48(SP)
	VPMOVZXBD 0(SP), Y0
	VPMOVZXBD 8(SP), Y1
	VPMOVZXBD 16(SP), Y2
	VPMOVZXBD 24(SP), Y3
	VPMOVZXBD 32(SP), Y4
	VPMOVZXBD 40(SP), Y5
	VPMOVZXBD 48(SP), Y6
	VPMOVZXBD 56(SP), Y7
	VCVTDQ2PS Y0, Y0
	VCVTDQ2PS Y1, Y1
	VCVTDQ2PS Y2, Y2
	VCVTDQ2PS Y3, Y3
	VCVTDQ2PS Y4, Y4
	VCVTDQ2PS Y5, Y5
	VCVTDQ2PS Y6, Y6
	VCVTDQ2PS Y7, Y7
	VALUE(Y0, Y8, Y14, Y15)
	VALUE(Y1, Y9, Y14, Y15)
	VALUE(Y2, Y10, Y14, Y15)
	VALUE(Y3, Y11, Y14, Y15)
	VMOVUPS Y8, 0(DI)
	VMOVUPS Y9, 32(DI)
	VMOVUPS Y10, 64(DI)
	VMOVUPS Y11, 96(DI)
	VALUE(Y4, Y8, Y14, Y15)
	VALUE(Y5, Y9, Y14, Y15)
	VALUE(Y6, Y10, Y14, Y15)
	VALUE(Y7, Y11, Y14, Y15)
	VMOVUPS Y8, 128(DI)
	VMOVUPS Y9, 160(DI)
	VMOVUPS Y10, 192(DI)
	VMOVUPS Y11, 224(DI)
	ADDQ $8, SI
	ADDQ $8, R10
	ADDQ $256, DI
	SUBQ $8, CX
	JGT  block8
	VZEROUPPER
	RET

// func normFloatsAVX2(dst, src *float32, n int, mean, inv float32)
//
// dst[i] = (src[i] - mean)·inv for i < n (a positive multiple of 8), each
// operation rounded to float32, as normFloatsGeneric computes it.
TEXT ·normFloatsAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS mean+24(FP), Y14
	VBROADCASTSS inv+28(FP), Y15

normf8:
	VMOVUPS (SI), Y0
	VSUBPS Y14, Y0, Y0
	VMULPS Y15, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JGT  normf8
	VZEROUPPER
	RET

// func blendLevelsAVX2(dst, deg, src *uint8, n int, alpha float32)
//
// dst[i] = blendLevel(deg[i], src[i], alpha) for i < n (a positive
// multiple of 8): deg + alpha·(src - deg) in float32, each operation
// rounded (no fused multiply-add), clipped to [0, 255] and truncated.
TEXT ·blendLevelsAVX2(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ deg+8(FP), SI
	MOVQ src+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS alpha+32(FP), Y15
	VBROADCASTSS levelsconst<>+0(SB), Y14
	VXORPS Y13, Y13, Y13

blend8:
	VPMOVZXBD (SI), Y0
	VPMOVZXBD (DX), Y1
	VCVTDQ2PS Y0, Y0
	VCVTDQ2PS Y1, Y1
	VSUBPS Y0, Y1, Y1
	VMULPS Y15, Y1, Y1
	VADDPS Y1, Y0, Y0
	VMAXPS Y13, Y0, Y0
	VMINPS Y14, Y0, Y0
	VCVTTPS2DQ Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPACKUSDW X1, X0, X0
	VPACKUSWB X0, X0, X0
	VMOVQ X0, (DI)
	ADDQ $8, SI
	ADDQ $8, DX
	ADDQ $8, DI
	SUBQ $8, CX
	JGT  blend8
	VZEROUPPER
	RET
