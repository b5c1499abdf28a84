//go:build amd64 && !purego

#include "textflag.h"

// Lanes of the YCbCr→RGB constants of image/color.YCbCrToRGB: 128, 0x10101
// (the luma scale), 91881 (Cr→R), -22554 (Cb→G), -46802 (Cr→G) and 116130
// (Cb→B), eight int32 lanes each.
#define LANES(off, v) \
	DATA yccconsts<>+(off+0)(SB)/4, v; DATA yccconsts<>+(off+4)(SB)/4, v; \
	DATA yccconsts<>+(off+8)(SB)/4, v; DATA yccconsts<>+(off+12)(SB)/4, v; \
	DATA yccconsts<>+(off+16)(SB)/4, v; DATA yccconsts<>+(off+20)(SB)/4, v; \
	DATA yccconsts<>+(off+24)(SB)/4, v; DATA yccconsts<>+(off+28)(SB)/4, v

LANES(0, $128)
LANES(32, $0x10101)
LANES(64, $91881)
LANES(96, $-22554)
LANES(128, $-46802)
LANES(160, $116130)
GLOBL yccconsts<>(SB), RODATA|NOPTR, $192

// PACK8 saturates the eight int32 lanes of Y to bytes and stores them at
// (dst).
#define PACK8(Y, X, dst) \
	VPACKSSDW Y, Y, Y; \
	VPERMQ    $0x08, Y, Y; \
	VPACKUSWB X, X, X; \
	VMOVQ     X, (dst)

// func ycbcrAVX2(y, cb, cr, rd, gd, bd *byte, n int, half bool)
//
// Converts n (a positive multiple of 8) pixels with image/color's
// fixed-point arithmetic: v = y·0x10101 + terms, then v>>16 saturated to
// [0, 255], which is YCbCrToRGB's clamp. With half, each chroma sample
// covers two pixels (cb and cr hold n/2 samples).
TEXT ·ycbcrAVX2(SB), NOSPLIT, $0-57
	MOVQ    y+0(FP), SI
	MOVQ    cb+8(FP), R8
	MOVQ    cr+16(FP), R9
	MOVQ    rd+24(FP), R10
	MOVQ    gd+32(FP), R11
	MOVQ    bd+40(FP), R12
	MOVQ    n+48(FP), CX
	MOVBQZX half+56(FP), DX
	VMOVDQU yccconsts<>+0(SB), Y10
	VMOVDQU yccconsts<>+32(SB), Y11
	VMOVDQU yccconsts<>+64(SB), Y12
	VMOVDQU yccconsts<>+96(SB), Y13
	VMOVDQU yccconsts<>+128(SB), Y14
	VMOVDQU yccconsts<>+160(SB), Y15
	MOVQ    $8, BX
	TESTQ   DX, DX
	JZ      loop
	MOVQ    $4, BX

loop:
	VPMOVZXBD (SI), Y0
	TESTQ     DX, DX
	JNZ       halfchroma
	VPMOVZXBD (R8), Y1
	VPMOVZXBD (R9), Y2
	JMP       convert

halfchroma:
	// Four samples, each repeated: c0 c0 c1 c1 c2 c2 c3 c3.
	VMOVD      (R8), X1
	VPUNPCKLBW X1, X1, X1
	VPMOVZXBD  X1, Y1
	VMOVD      (R9), X2
	VPUNPCKLBW X2, X2, X2
	VPMOVZXBD  X2, Y2

convert:
	VPSUBD  Y10, Y1, Y1
	VPSUBD  Y10, Y2, Y2
	VPMULLD Y11, Y0, Y0
	VPMULLD Y12, Y2, Y3
	VPADDD  Y3, Y0, Y3
	VPMULLD Y13, Y1, Y4
	VPMULLD Y14, Y2, Y5
	VPADDD  Y4, Y0, Y4
	VPADDD  Y5, Y4, Y4
	VPMULLD Y15, Y1, Y5
	VPADDD  Y5, Y0, Y5
	VPSRAD  $16, Y3, Y3
	VPSRAD  $16, Y4, Y4
	VPSRAD  $16, Y5, Y5
	PACK8(Y3, X3, R10)
	PACK8(Y4, X4, R11)
	PACK8(Y5, X5, R12)
	ADDQ    $8, SI
	ADDQ    BX, R8
	ADDQ    BX, R9
	ADDQ    $8, R10
	ADDQ    $8, R11
	ADDQ    $8, R12
	SUBQ    $8, CX
	JNZ     loop
	VZEROUPPER
	RET
