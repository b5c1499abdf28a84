//go:build amd64 && !purego

#include "textflag.h"

DATA vtapsone<>+0(SB)/4, $1.0
GLOBL vtapsone<>(SB), RODATA|NOPTR, $4

// func vtapsAVX2(dst, src *float32, stride, n int, w *float32, taps int)
//
// dst[x] = clamp01(Σ_k w[k]·src[k·stride+x]) for x < n (a positive
// multiple of 8), each sum added up from 0 one tap at a time, in tap
// order, each product rounded (no fused multiply-add): verticalTaps's
// arithmetic.
TEXT ·vtapsAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ stride+16(FP), R8
	SHLQ $2, R8
	MOVQ n+24(FP), CX
	MOVQ w+32(FP), R9
	MOVQ taps+40(FP), R10
	VXORPS Y14, Y14, Y14
	VBROADCASTSS vtapsone<>(SB), Y15

wide:
	CMPQ CX, $32
	JLT  narrow
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ SI, R11
	XORQ R12, R12

widetap:
	VBROADCASTSS (R9)(R12*4), Y8
	VMULPS (R11), Y8, Y4
	VMULPS 32(R11), Y8, Y5
	VMULPS 64(R11), Y8, Y6
	VMULPS 96(R11), Y8, Y7
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	ADDQ R8, R11
	INCQ R12
	CMPQ R12, R10
	JLT  widetap
	VMAXPS Y14, Y0, Y0
	VMAXPS Y14, Y1, Y1
	VMAXPS Y14, Y2, Y2
	VMAXPS Y14, Y3, Y3
	VMINPS Y15, Y0, Y0
	VMINPS Y15, Y1, Y1
	VMINPS Y15, Y2, Y2
	VMINPS Y15, Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, SI
	SUBQ $32, CX
	JMP  wide

narrow:
	TESTQ CX, CX
	JZ    done
	VXORPS Y0, Y0, Y0
	MOVQ SI, R11
	XORQ R12, R12

narrowtap:
	VBROADCASTSS (R9)(R12*4), Y8
	VMULPS (R11), Y8, Y4
	VADDPS Y4, Y0, Y0
	ADDQ R8, R11
	INCQ R12
	CMPQ R12, R10
	JLT  narrowtap
	VMAXPS Y14, Y0, Y0
	VMINPS Y15, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  narrow

done:
	VZEROUPPER
	RET

// HTAPS sums output j's taps over the 8 interleaved rows into ACC: the
// weights at (R9) onwards, the inputs from column start[x+j] of (SI), 8
// floats per column; uses AX, BX, R13, R14, Y8 and Y9.
#define HTAPS(j, ACC, TAP, SKIP) \
	MOVQ   (j*8)(R10), AX; \
	MOVQ   (j*8)(R11), BX; \
	SHLQ   $5, AX; \
	LEAQ   (SI)(AX*1), R13; \
	MOVQ   R12, R14; \
	IMULQ  $(j), R14; \
	ADDQ   R9, R14; \
	VXORPS ACC, ACC, ACC; \
	TESTQ  BX, BX; \
	JZ     SKIP; \
TAP: \
	VBROADCASTSS (R14), Y8; \
	VMULPS (R13), Y8, Y9; \
	VADDPS Y9, ACC, ACC; \
	ADDQ   $32, R13; \
	ADDQ   $4, R14; \
	DECQ   BX; \
	JNZ    TAP; \
SKIP:

// func htapsAVX2(dst *float32, outStride int, src *float32, start, size *int, w *float32, ksize, n int)
//
// For 8 rows interleaved in src (column c of row r at src[c·8+r]) and
// outputs x < n (a positive multiple of 8): dst[r·outStride+x] =
// clamp01(Σ_k w[x·ksize+k]·src[(start[x]+k)·8+r]), each sum added up from
// 0 one tap at a time, each product rounded: horizontalRows's arithmetic,
// eight rows at a time.
TEXT ·htapsAVX2(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ outStride+8(FP), DX
	SHLQ $2, DX
	MOVQ src+16(FP), SI
	MOVQ start+24(FP), R10
	MOVQ size+32(FP), R11
	MOVQ w+40(FP), R9
	MOVQ ksize+48(FP), R12
	SHLQ $2, R12
	MOVQ n+56(FP), CX

chunk:
	HTAPS(0, Y0, tap0, skip0)
	HTAPS(1, Y1, tap1, skip1)
	HTAPS(2, Y2, tap2, skip2)
	HTAPS(3, Y3, tap3, skip3)
	HTAPS(4, Y4, tap4, skip4)
	HTAPS(5, Y5, tap5, skip5)
	HTAPS(6, Y6, tap6, skip6)
	HTAPS(7, Y7, tap7, skip7)
	// Clamp to [0, 1].
	VXORPS       Y8, Y8, Y8
	VBROADCASTSS vtapsone<>(SB), Y9
	VMAXPS       Y8, Y0, Y0
	VMAXPS       Y8, Y1, Y1
	VMAXPS       Y8, Y2, Y2
	VMAXPS       Y8, Y3, Y3
	VMAXPS       Y8, Y4, Y4
	VMAXPS       Y8, Y5, Y5
	VMAXPS       Y8, Y6, Y6
	VMAXPS       Y8, Y7, Y7
	VMINPS       Y9, Y0, Y0
	VMINPS       Y9, Y1, Y1
	VMINPS       Y9, Y2, Y2
	VMINPS       Y9, Y3, Y3
	VMINPS       Y9, Y4, Y4
	VMINPS       Y9, Y5, Y5
	VMINPS       Y9, Y6, Y6
	VMINPS       Y9, Y7, Y7
	// Transpose: Yj holds output x+j of rows 0..7; row r's outputs
	// x..x+7 end in Y8+r.
	VPUNPCKLDQ  Y1, Y0, Y8
	VPUNPCKHDQ  Y1, Y0, Y9
	VPUNPCKLDQ  Y3, Y2, Y10
	VPUNPCKHDQ  Y3, Y2, Y11
	VPUNPCKLDQ  Y5, Y4, Y12
	VPUNPCKHDQ  Y5, Y4, Y13
	VPUNPCKLDQ  Y7, Y6, Y14
	VPUNPCKHDQ  Y7, Y6, Y15
	VPUNPCKLQDQ Y10, Y8, Y0
	VPUNPCKHQDQ Y10, Y8, Y1
	VPUNPCKLQDQ Y11, Y9, Y2
	VPUNPCKHQDQ Y11, Y9, Y3
	VPUNPCKLQDQ Y14, Y12, Y4
	VPUNPCKHQDQ Y14, Y12, Y5
	VPUNPCKLQDQ Y15, Y13, Y6
	VPUNPCKHQDQ Y15, Y13, Y7
	VPERM2I128  $0x20, Y4, Y0, Y8
	VPERM2I128  $0x31, Y4, Y0, Y12
	VPERM2I128  $0x20, Y5, Y1, Y9
	VPERM2I128  $0x31, Y5, Y1, Y13
	VPERM2I128  $0x20, Y6, Y2, Y10
	VPERM2I128  $0x31, Y6, Y2, Y14
	VPERM2I128  $0x20, Y7, Y3, Y11
	VPERM2I128  $0x31, Y7, Y3, Y15
	MOVQ        DI, AX
	VMOVUPS     Y8, (AX)
	ADDQ        DX, AX
	VMOVUPS     Y9, (AX)
	ADDQ        DX, AX
	VMOVUPS     Y10, (AX)
	ADDQ        DX, AX
	VMOVUPS     Y11, (AX)
	ADDQ        DX, AX
	VMOVUPS     Y12, (AX)
	ADDQ        DX, AX
	VMOVUPS     Y13, (AX)
	ADDQ        DX, AX
	VMOVUPS     Y14, (AX)
	ADDQ        DX, AX
	VMOVUPS     Y15, (AX)
	// Next 8 outputs.
	ADDQ        $32, DI
	ADDQ        $64, R10
	ADDQ        $64, R11
	MOVQ        R12, AX
	SHLQ        $3, AX
	ADDQ        AX, R9
	SUBQ        $8, CX
	JNZ         chunk
	VZEROUPPER
	RET
