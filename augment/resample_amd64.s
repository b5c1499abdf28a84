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
