//go:build amd64 && !purego

#include "textflag.h"

DATA levelsconst<>+0(SB)/4, $255.0
DATA levelsconst<>+4(SB)/4, $0.5
GLOBL levelsconst<>(SB), RODATA|NOPTR, $8

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
// multiple of 8), each operation rounded to float32 (no fused
// multiply-add), as normLevelsGeneric computes it.
TEXT ·normLevelsAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS levelsconst<>+0(SB), Y13
	VBROADCASTSS mean+24(FP), Y14
	VBROADCASTSS inv+28(FP), Y15

norm8:
	VPMOVZXBD (SI), Y0
	VCVTDQ2PS Y0, Y0
	VDIVPS Y13, Y0, Y0
	VSUBPS Y14, Y0, Y0
	VMULPS Y15, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $8, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JGT  norm8
	VZEROUPPER
	RET
