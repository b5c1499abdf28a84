//go:build amd64 && !purego

#include "textflag.h"
#include "consts_amd64.h"

// AVX2+FMA kernels: 8 float32 lanes per vector. A loop takes whole vectors;
// the last 1–7 elements are loaded and stored with VMASKMOVPS under the
// mask in Y15 (TAILMASK), so no kernel reads or writes past its slices.
// Constants are read from consts<> as vector operands.

// tailmask<> is 8 lanes of all ones then 8 of zeros: the 8 lanes starting
// at lane 8−k hold k ones.
DATA tailmask<>+0(SB)/4, $0xffffffff
DATA tailmask<>+4(SB)/4, $0xffffffff
DATA tailmask<>+8(SB)/4, $0xffffffff
DATA tailmask<>+12(SB)/4, $0xffffffff
DATA tailmask<>+16(SB)/4, $0xffffffff
DATA tailmask<>+20(SB)/4, $0xffffffff
DATA tailmask<>+24(SB)/4, $0xffffffff
DATA tailmask<>+28(SB)/4, $0xffffffff
DATA tailmask<>+32(SB)/4, $0
DATA tailmask<>+36(SB)/4, $0
DATA tailmask<>+40(SB)/4, $0
DATA tailmask<>+44(SB)/4, $0
DATA tailmask<>+48(SB)/4, $0
DATA tailmask<>+52(SB)/4, $0
DATA tailmask<>+56(SB)/4, $0
DATA tailmask<>+60(SB)/4, $0
GLOBL tailmask<>(SB), RODATA|NOPTR, $64

// TAILMASK sets Y15 to ones in its low CX lanes (CX in 1…7), zeros above.
// Clobbers AX and CX.
#define TAILMASK \
	SHLQ $2, CX; \
	LEAQ tailmask<>+32(SB), AX; \
	SUBQ CX, AX; \
	VMOVDQU (AX), Y15

// ELEMENTWISE2(OP) is the body of a kernel dst[i] = x[i] OP y[i] for
// func(dst, x, y *float32, n int): two vectors a step, then one, then
// the masked tail.
#define ELEMENTWISE2(OP) \
	MOVQ dst+0(FP), DI; \
	MOVQ x+8(FP), SI; \
	MOVQ y+16(FP), DX; \
	MOVQ n+24(FP), CX; \
loop2:; \
	CMPQ CX, $16; \
	JLT  loop1; \
	VMOVUPS (SI), Y0; \
	VMOVUPS 32(SI), Y1; \
	OP (DX), Y0, Y0; \
	OP 32(DX), Y1, Y1; \
	VMOVUPS Y0, (DI); \
	VMOVUPS Y1, 32(DI); \
	ADDQ $64, SI; \
	ADDQ $64, DX; \
	ADDQ $64, DI; \
	SUBQ $16, CX; \
	JMP  loop2; \
loop1:; \
	CMPQ CX, $8; \
	JLT  tail; \
	VMOVUPS (SI), Y0; \
	OP (DX), Y0, Y0; \
	VMOVUPS Y0, (DI); \
	ADDQ $32, SI; \
	ADDQ $32, DX; \
	ADDQ $32, DI; \
	SUBQ $8, CX; \
tail:; \
	TESTQ CX, CX; \
	JZ    done; \
	TAILMASK; \
	VMASKMOVPS (SI), Y15, Y0; \
	VMASKMOVPS (DX), Y15, Y1; \
	OP Y1, Y0, Y0; \
	VMASKMOVPS Y0, Y15, (DI); \
done:; \
	VZEROUPPER; \
	RET

// EXP sets out = e^in lane-wise: in is clamped to ≤ 89 (NaN passes), split
// as k·ln2 + r with k = round(in·log2e) and |r| ≤ ln2/2, e^r is the
// degree-7 Taylor polynomial in Estrin's form, and the result is scaled by
// 2^⌊k/2⌋ and 2^(k−⌊k/2⌋), each a normal float32, so that k = 128 gives
// the largest finite values and overflows to +Inf past e^88.72. Lanes with
// in < EXPMIN are set to 0. Clobbers Y2–Y6; in and out must be other
// registers.
#define EXP(in, out) \
	VMOVUPS consts<>+EXPHI(SB), Y2; \
	VMINPS in, Y2, Y2; \
	VMOVUPS consts<>+ROUND(SB), Y3; \
	VFMADD231PS consts<>+LOG2E(SB), Y2, Y3; \
	VSUBPS consts<>+ROUND(SB), Y3, Y4; \
	VFMADD231PS consts<>+NLN2HI(SB), Y4, Y2; \
	VFMADD231PS consts<>+NLN2LO(SB), Y4, Y2; \
	VMULPS Y2, Y2, Y4; \
	VMOVUPS consts<>+C6(SB), Y5; \
	VFMADD213PS consts<>+C2(SB), Y2, Y5; \
	VMOVUPS consts<>+C120(SB), Y6; \
	VFMADD213PS consts<>+C24(SB), Y2, Y6; \
	VMOVUPS consts<>+C5040(SB), out; \
	VFMADD213PS consts<>+C720(SB), Y2, out; \
	VFMADD213PS Y6, Y4, out; \
	VFMADD213PS Y5, Y4, out; \
	VFMADD213PS Y2, Y4, out; \
	VADDPS consts<>+ONE(SB), out, out; \
	VPSUBD consts<>+ROUND(SB), Y3, Y3; \
	VPSRAD $1, Y3, Y4; \
	VPSUBD Y4, Y3, Y3; \
	VPADDD consts<>+I127(SB), Y4, Y4; \
	VPADDD consts<>+I127(SB), Y3, Y3; \
	VPSLLD $23, Y4, Y4; \
	VPSLLD $23, Y3, Y3; \
	VMULPS Y4, out, out; \
	VMULPS Y3, out, out; \
	VCMPPS $5, consts<>+EXPMIN(SB), in, Y2; \
	VANDPS Y2, out, out

// ERFC sets out = erfc(z) for z = |x| ≥ 0 (or NaN) given e = e^(−z²):
// t·P(t)·e with t = 1/(1 + ERFP·z). Clobbers Y13; out must differ from
// z, e and Y13.
#define ERFC(z, e, out) \
	VMOVUPS consts<>+ONE(SB), Y13; \
	VFMADD231PS consts<>+ERFP(SB), z, Y13; \
	VMOVUPS consts<>+ONE(SB), out; \
	VDIVPS Y13, out, Y13; \
	VMOVUPS consts<>+A5(SB), out; \
	VFMADD213PS consts<>+A4(SB), Y13, out; \
	VFMADD213PS consts<>+A3(SB), Y13, out; \
	VFMADD213PS consts<>+A2(SB), Y13, out; \
	VFMADD213PS consts<>+A1(SB), Y13, out; \
	VMULPS Y13, out, out; \
	VMULPS e, out, out

// HSUM adds the 8 lanes of Y0 into X0. Clobbers Y1.
#define HSUM \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS X1, X0, X0; \
	VMOVHLPS X0, X0, X1; \
	VADDPS X1, X0, X0; \
	VMOVSHDUP X0, X1; \
	VADDSS X1, X0, X0

// func expAVX2(dst, x *float32, n int)
TEXT ·expAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX

loop:
	CMPQ CX, $8
	JLT  tail
	VMOVUPS (SI), Y0
	EXP(Y0, Y1)
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMASKMOVPS (SI), Y15, Y0
	EXP(Y0, Y1)
	VMASKMOVPS Y1, Y15, (DI)

done:
	VZEROUPPER
	RET

// func expSubSumAVX2(dst, x *float32, n int, m float32) float32
TEXT ·expSubSumAVX2(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9

loop2:
	CMPQ CX, $16
	JLT  loop1
	VMOVUPS (SI), Y0
	VSUBPS  Y7, Y0, Y0
	EXP(Y0, Y1)
	VMOVUPS Y1, (DI)
	VADDPS  Y1, Y8, Y8
	VMOVUPS 32(SI), Y0
	VSUBPS  Y7, Y0, Y0
	EXP(Y0, Y1)
	VMOVUPS Y1, 32(DI)
	VADDPS  Y1, Y9, Y9
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  loop2

loop1:
	CMPQ CX, $8
	JLT  tail
	VMOVUPS (SI), Y0
	VSUBPS  Y7, Y0, Y0
	EXP(Y0, Y1)
	VMOVUPS Y1, (DI)
	VADDPS  Y1, Y8, Y8
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMASKMOVPS (SI), Y15, Y0
	VSUBPS  Y7, Y0, Y0
	EXP(Y0, Y1)
	VMASKMOVPS Y1, Y15, (DI)
	VANDPS  Y15, Y1, Y1
	VADDPS  Y1, Y9, Y9

done:
	VADDPS Y9, Y8, Y0
	HSUM
	MOVSS X0, ret+32(FP)
	VZEROUPPER
	RET

// func maxAVX2(x *float32, n int) float32
TEXT ·maxAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVUPS consts<>+NEGINF(SB), Y0
	VMOVAPS Y0, Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y0, Y3
	VXORPS  Y10, Y10, Y10

loop4:
	CMPQ CX, $32
	JLT  loop1
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VMAXPS  Y4, Y0, Y0
	VMAXPS  Y5, Y1, Y1
	VMAXPS  Y6, Y2, Y2
	VMAXPS  Y7, Y3, Y3
	VCMPPS  $3, Y5, Y4, Y8
	VCMPPS  $3, Y7, Y6, Y9
	VORPS   Y8, Y10, Y10
	VORPS   Y9, Y10, Y10
	ADDQ $128, SI
	SUBQ $32, CX
	JMP  loop4

loop1:
	CMPQ CX, $8
	JLT  tail
	VMOVUPS (SI), Y4
	VMAXPS  Y4, Y0, Y0
	VCMPPS  $3, Y4, Y4, Y8
	VORPS   Y8, Y10, Y10
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  loop1

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMASKMOVPS (SI), Y15, Y4
	VMOVUPS consts<>+NEGINF(SB), Y5
	VBLENDVPS Y15, Y4, Y5, Y4
	VMAXPS  Y4, Y0, Y0
	VCMPPS  $3, Y4, Y4, Y8
	VORPS   Y8, Y10, Y10

done:
	VMOVMSKPS Y10, AX
	TESTL AX, AX
	JNZ   nan
	VMAXPS Y1, Y0, Y0
	VMAXPS Y3, Y2, Y2
	VMAXPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VMOVHLPS X0, X0, X1
	VMAXPS X1, X0, X0
	VMOVSHDUP X0, X1
	VMAXSS X1, X0, X0
	MOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

nan:
	MOVL $0x7fc00000, AX
	MOVL AX, ret+16(FP)
	VZEROUPPER
	RET

// func sumAVX2(x *float32, n int) float32
TEXT ·sumAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

loop4:
	CMPQ CX, $32
	JLT  loop1
	VADDPS (SI), Y0, Y0
	VADDPS 32(SI), Y1, Y1
	VADDPS 64(SI), Y2, Y2
	VADDPS 96(SI), Y3, Y3
	ADDQ $128, SI
	SUBQ $32, CX
	JMP  loop4

loop1:
	CMPQ CX, $8
	JLT  tail
	VADDPS (SI), Y0, Y0
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  loop1

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMASKMOVPS (SI), Y15, Y4
	VADDPS Y4, Y1, Y1

done:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM
	MOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func dotAVX2(x, y *float32, n int) float32
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DX
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

loop4:
	CMPQ CX, $32
	JLT  loop1
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DX), Y4, Y0
	VFMADD231PS 32(DX), Y5, Y1
	VFMADD231PS 64(DX), Y6, Y2
	VFMADD231PS 96(DX), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DX
	SUBQ $32, CX
	JMP  loop4

loop1:
	CMPQ CX, $8
	JLT  tail
	VMOVUPS (SI), Y4
	VFMADD231PS (DX), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DX
	SUBQ $8, CX
	JMP  loop1

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMASKMOVPS (SI), Y15, Y4
	VMASKMOVPS (DX), Y15, Y5
	VFMADD231PS Y5, Y4, Y1

done:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM
	MOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func sumSqDevAVX2(x *float32, n int, m float32) float32
TEXT ·sumSqDevAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS m+16(FP), Y8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

loop4:
	CMPQ CX, $32
	JLT  loop1
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VSUBPS Y8, Y4, Y4
	VSUBPS Y8, Y5, Y5
	VSUBPS Y8, Y6, Y6
	VSUBPS Y8, Y7, Y7
	VFMADD231PS Y4, Y4, Y0
	VFMADD231PS Y5, Y5, Y1
	VFMADD231PS Y6, Y6, Y2
	VFMADD231PS Y7, Y7, Y3
	ADDQ $128, SI
	SUBQ $32, CX
	JMP  loop4

loop1:
	CMPQ CX, $8
	JLT  tail
	VMOVUPS (SI), Y4
	VSUBPS Y8, Y4, Y4
	VFMADD231PS Y4, Y4, Y0
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  loop1

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMASKMOVPS (SI), Y15, Y4
	VSUBPS Y8, Y4, Y4
	VANDPS Y15, Y4, Y4
	VFMADD231PS Y4, Y4, Y1

done:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM
	MOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func scaleAVX2(dst, x *float32, n int, a float32)
TEXT ·scaleAVX2(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS a+24(FP), Y7

loop2:
	CMPQ CX, $16
	JLT  loop1
	VMULPS (SI), Y7, Y0
	VMULPS 32(SI), Y7, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  loop2

loop1:
	CMPQ CX, $8
	JLT  tail
	VMULPS (SI), Y7, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMASKMOVPS (SI), Y15, Y0
	VMULPS Y7, Y0, Y0
	VMASKMOVPS Y0, Y15, (DI)

done:
	VZEROUPPER
	RET

// func addConstAVX2(dst, x *float32, n int, c float32)
TEXT ·addConstAVX2(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS c+24(FP), Y7

loop2:
	CMPQ CX, $16
	JLT  loop1
	VADDPS (SI), Y7, Y0
	VADDPS 32(SI), Y7, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  loop2

loop1:
	CMPQ CX, $8
	JLT  tail
	VADDPS (SI), Y7, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMASKMOVPS (SI), Y15, Y0
	VADDPS Y7, Y0, Y0
	VMASKMOVPS Y0, Y15, (DI)

done:
	VZEROUPPER
	RET

// func axpyAVX2(dst, x *float32, n int, a float32)
TEXT ·axpyAVX2(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS a+24(FP), Y7

loop2:
	CMPQ CX, $16
	JLT  loop1
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VFMADD231PS (SI), Y7, Y0
	VFMADD231PS 32(SI), Y7, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  loop2

loop1:
	CMPQ CX, $8
	JLT  tail
	VMOVUPS (DI), Y0
	VFMADD231PS (SI), Y7, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMASKMOVPS (DI), Y15, Y0
	VMASKMOVPS (SI), Y15, Y1
	VFMADD231PS Y1, Y7, Y0
	VMASKMOVPS Y0, Y15, (DI)

done:
	VZEROUPPER
	RET

// func mulAVX2(dst, x, y *float32, n int)
TEXT ·mulAVX2(SB), NOSPLIT, $0-32
	ELEMENTWISE2(VMULPS)

// func addAVX2(dst, x, y *float32, n int)
TEXT ·addAVX2(SB), NOSPLIT, $0-32
	ELEMENTWISE2(VADDPS)

// ZEROUNLESS(PRED) is the body of a kernel dst[i] = y[i] where x[i] PRED 0
// holds (a VCMPPS predicate), else +0, for func(dst, x, y *float32, n
// int): y ANDed with the comparison's mask, one vector a step, then the
// masked tail.
#define ZEROUNLESS(PRED) \
	MOVQ dst+0(FP), DI; \
	MOVQ x+8(FP), SI; \
	MOVQ y+16(FP), DX; \
	MOVQ n+24(FP), CX; \
	VXORPS Y14, Y14, Y14; \
loop:; \
	CMPQ CX, $8; \
	JLT  tail; \
	VMOVUPS (SI), Y0; \
	VCMPPS PRED, Y14, Y0, Y1; \
	VANDPS (DX), Y1, Y1; \
	VMOVUPS Y1, (DI); \
	ADDQ $32, SI; \
	ADDQ $32, DX; \
	ADDQ $32, DI; \
	SUBQ $8, CX; \
	JMP  loop; \
tail:; \
	TESTQ CX, CX; \
	JZ    done; \
	TAILMASK; \
	VMASKMOVPS (SI), Y15, Y0; \
	VMASKMOVPS (DX), Y15, Y2; \
	VCMPPS PRED, Y14, Y0, Y1; \
	VANDPS Y2, Y1, Y1; \
	VMASKMOVPS Y1, Y15, (DI); \
done:; \
	VZEROUPPER; \
	RET

// func reluAVX2(dst, x, y *float32, n int)
//
// NLT_UQ: y (x itself) kept where x is not below zero, −0 and NaN
// included.
TEXT ·reluAVX2(SB), NOSPLIT, $0-32
	ZEROUNLESS($21)

// func reluGradAVX2(dst, x, y *float32, n int)
//
// GT_OQ: y (dy) kept where x (ReLU's output) is above zero, NaN excluded.
TEXT ·reluGradAVX2(SB), NOSPLIT, $0-32
	ZEROUNLESS($30)

// func mulDiffAVX2(dst, y, x *float32, n int, c float32)
TEXT ·mulDiffAVX2(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ y+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	VBROADCASTSS c+32(FP), Y7

loop1:
	CMPQ CX, $8
	JLT  tail
	VMOVUPS (SI), Y0
	VSUBPS Y7, Y0, Y0
	VMULPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop1

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMASKMOVPS (SI), Y15, Y0
	VMASKMOVPS (DX), Y15, Y1
	VSUBPS Y7, Y0, Y0
	VMULPS Y1, Y0, Y0
	VMASKMOVPS Y0, Y15, (DI)

done:
	VZEROUPPER
	RET

// ERF sets Y8 = erf(Y0) = sign(x)·(1 − erfc(|x|)). Clobbers Y2–Y6,
// Y10–Y13.
#define ERF \
	VANDPS consts<>+ABS(SB), Y0, Y12; \
	VMULPS Y12, Y12, Y10; \
	VXORPS consts<>+SIGN(SB), Y10, Y10; \
	EXP(Y10, Y11); \
	ERFC(Y12, Y11, Y8); \
	VMOVUPS consts<>+ONE(SB), Y10; \
	VSUBPS Y8, Y10, Y8; \
	VANDPS consts<>+SIGN(SB), Y0, Y10; \
	VXORPS Y10, Y8, Y8

// func erfAVX2(dst, x *float32, n int)
TEXT ·erfAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX

loop:
	CMPQ CX, $8
	JLT  tail
	VMOVUPS (SI), Y0
	ERF
	VMOVUPS Y8, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMASKMOVPS (SI), Y15, Y0
	ERF
	VMASKMOVPS Y8, Y15, (DI)

done:
	VZEROUPPER
	RET

// NORMAL sets Y14 = Φ(x) and Y11 = e^(−x²/2) for x in Y0, with Φ(x) =
// 1 − erfc(|x|/√2)/2 for x ≥ 0 and erfc(|x|/√2)/2 otherwise. Clobbers
// Y2–Y6, Y10–Y13.
#define NORMAL \
	VMULPS Y0, Y0, Y10; \
	VMULPS consts<>+NHALF(SB), Y10, Y10; \
	EXP(Y10, Y11); \
	VANDPS consts<>+ABS(SB), Y0, Y12; \
	VMULPS consts<>+INVSQRT2(SB), Y12, Y12; \
	ERFC(Y12, Y11, Y14); \
	VMULPS consts<>+HALF(SB), Y14, Y14; \
	VMOVUPS consts<>+ONE(SB), Y10; \
	VSUBPS Y14, Y10, Y10; \
	VXORPS Y12, Y12, Y12; \
	VCMPPS $13, Y12, Y0, Y12; \
	VBLENDVPS Y12, Y10, Y14, Y14

// func geluAVX2(dst, deriv, x *float32, n int, stream bool)
//
// With stream set and deriv on a 32-byte boundary, deriv's whole vectors
// are written with streaming (non-temporal) stores.
TEXT ·geluAVX2(SB), NOSPLIT, $0-33
	MOVQ dst+0(FP), DI
	MOVQ deriv+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	MOVBQZX stream+32(FP), R8
	TESTQ $31, DX
	JZ    aligned
	XORQ  R8, R8

aligned:

loop:
	CMPQ CX, $8
	JLT  tail
	VMOVUPS (SI), Y0
	NORMAL
	TESTQ DI, DI
	JZ    noy
	VMULPS Y14, Y0, Y8
	VMOVUPS Y8, (DI)
	ADDQ $32, DI

noy:
	TESTQ DX, DX
	JZ    next
	VMULPS consts<>+INVSQRT2PI(SB), Y11, Y9
	VFMADD213PS Y14, Y0, Y9
	TESTQ R8, R8
	JNZ   streamed
	VMOVUPS Y9, (DX)
	ADDQ $32, DX
	JMP   next

streamed:
	VMOVNTPS Y9, (DX)
	ADDQ $32, DX

next:
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  loop

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMASKMOVPS (SI), Y15, Y0
	NORMAL
	TESTQ DI, DI
	JZ    tailnoy
	VMULPS Y14, Y0, Y8
	VMASKMOVPS Y8, Y15, (DI)

tailnoy:
	TESTQ DX, DX
	JZ    done
	VMULPS consts<>+INVSQRT2PI(SB), Y11, Y9
	VFMADD213PS Y14, Y0, Y9
	VMASKMOVPS Y9, Y15, (DX)

done:
	VZEROUPPER
	RET

// func lnRowAVX2(y, x, w, b *float32, n int, mean, rstd float32)
TEXT ·lnRowAVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), DX
	MOVQ b+24(FP), BX
	MOVQ n+32(FP), CX
	VBROADCASTSS mean+40(FP), Y7
	VBROADCASTSS rstd+44(FP), Y8

loop:
	CMPQ CX, $8
	JLT  tail
	VMOVUPS (SI), Y0
	VMOVUPS (BX), Y1
	VSUBPS Y7, Y0, Y0
	VMULPS Y8, Y0, Y0
	VFMADD231PS (DX), Y0, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, BX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMASKMOVPS (SI), Y15, Y0
	VMASKMOVPS (BX), Y15, Y1
	VMASKMOVPS (DX), Y15, Y2
	VSUBPS Y7, Y0, Y0
	VMULPS Y8, Y0, Y0
	VFMADD231PS Y2, Y0, Y1
	VMASKMOVPS Y1, Y15, (DI)

done:
	VZEROUPPER
	RET

// func lnGradSumsAVX2(x, dy, w *float32, n int, mean, rstd float32) (sg, sgx float32)
TEXT ·lnGradSumsAVX2(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ dy+8(FP), DX
	MOVQ w+16(FP), BX
	MOVQ n+24(FP), CX
	VBROADCASTSS mean+32(FP), Y7
	VBROADCASTSS rstd+36(FP), Y8
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13

loop2:
	CMPQ CX, $16
	JLT  loop1
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	VMULPS (BX), Y0, Y0
	VMULPS 32(BX), Y1, Y1
	VMOVUPS (SI), Y2
	VMOVUPS 32(SI), Y3
	VSUBPS Y7, Y2, Y2
	VSUBPS Y7, Y3, Y3
	VMULPS Y8, Y2, Y2
	VMULPS Y8, Y3, Y3
	VADDPS Y0, Y10, Y10
	VADDPS Y1, Y11, Y11
	VFMADD231PS Y2, Y0, Y12
	VFMADD231PS Y3, Y1, Y13
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, BX
	SUBQ $16, CX
	JMP  loop2

loop1:
	CMPQ CX, $8
	JLT  tail
	VMOVUPS (DX), Y0
	VMULPS (BX), Y0, Y0
	VMOVUPS (SI), Y2
	VSUBPS Y7, Y2, Y2
	VMULPS Y8, Y2, Y2
	VADDPS Y0, Y10, Y10
	VFMADD231PS Y2, Y0, Y12
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, BX
	SUBQ $8, CX

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMASKMOVPS (DX), Y15, Y0
	VMASKMOVPS (BX), Y15, Y1
	VMULPS Y1, Y0, Y0
	VMASKMOVPS (SI), Y15, Y2
	VSUBPS Y7, Y2, Y2
	VMULPS Y8, Y2, Y2
	VADDPS Y0, Y11, Y11
	VFMADD231PS Y2, Y0, Y13

done:
	VADDPS Y11, Y10, Y0
	HSUM
	MOVSS X0, sg+40(FP)
	VADDPS Y13, Y12, Y0
	HSUM
	MOVSS X0, sgx+44(FP)
	VZEROUPPER
	RET

// func lnGradRowAVX2(dx, x, dy, w *float32, n int, mean, rstd, a, c float32)
TEXT ·lnGradRowAVX2(SB), NOSPLIT, $0-56
	MOVQ dx+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ dy+16(FP), DX
	MOVQ w+24(FP), BX
	MOVQ n+32(FP), CX
	VBROADCASTSS mean+40(FP), Y7
	VBROADCASTSS rstd+44(FP), Y8
	VBROADCASTSS a+48(FP), Y9
	VBROADCASTSS c+52(FP), Y10

loop:
	CMPQ CX, $8
	JLT  tail
	VMOVUPS (DX), Y0
	VMULPS (BX), Y0, Y0
	VSUBPS Y9, Y0, Y0
	VMOVUPS (SI), Y1
	VSUBPS Y7, Y1, Y1
	VMULPS Y8, Y1, Y1
	VFNMADD231PS Y10, Y1, Y0
	VMULPS Y8, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, BX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMASKMOVPS (DX), Y15, Y0
	VMASKMOVPS (BX), Y15, Y2
	VMULPS Y2, Y0, Y0
	VSUBPS Y9, Y0, Y0
	VMASKMOVPS (SI), Y15, Y1
	VSUBPS Y7, Y1, Y1
	VMULPS Y8, Y1, Y1
	VFNMADD231PS Y10, Y1, Y0
	VMULPS Y8, Y0, Y0
	VMASKMOVPS Y0, Y15, (DI)

done:
	VZEROUPPER
	RET

// func lnGradWeightAVX2(acc *float64, x, dy *float32, n int, mean, rstd float32)
TEXT ·lnGradWeightAVX2(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ dy+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS mean+32(FP), Y7
	VBROADCASTSS rstd+36(FP), Y8

loop:
	CMPQ CX, $8
	JLT  tail
	VMOVUPS (SI), Y0
	VSUBPS Y7, Y0, Y0
	VMULPS Y8, Y0, Y0
	VMULPS (DX), Y0, Y0
	VCVTPS2PD X0, Y1
	VEXTRACTF128 $1, Y0, X2
	VCVTPS2PD X2, Y2
	VADDPD (DI), Y1, Y1
	VADDPD 32(DI), Y2, Y2
	VMOVUPD Y1, (DI)
	VMOVUPD Y2, 32(DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $64, DI
	SUBQ $8, CX
	JMP  loop

tail:
	TESTQ CX, CX
	JZ    done
	VMOVSS (SI), X0
	VSUBSS X7, X0, X0
	VMULSS X8, X0, X0
	VMULSS (DX), X0, X0
	VCVTSS2SD X0, X0, X0
	VADDSD (DI), X0, X0
	VMOVSD X0, (DI)
	ADDQ $4, SI
	ADDQ $4, DX
	ADDQ $8, DI
	DECQ CX
	JMP  tail

done:
	VZEROUPPER
	RET

// ADAMW scales Y0 = g by GradScale (read through R8, the AdamWCoef) and
// updates Y1 = m, Y3 = v and Y6 = p from it, with the other coefficients
// in Y7–Y14 (the fields of AdamWCoef in order). Clobbers Y0, Y2, Y4, Y5.
#define ADAMW \
	VBROADCASTSS 32(R8), Y2; \
	VMULPS Y2, Y0, Y0; \
	VMULPS Y7, Y1, Y1; \
	VMULPS Y8, Y0, Y2; \
	VADDPS Y2, Y1, Y1; \
	VMULPS Y9, Y3, Y3; \
	VMULPS Y10, Y0, Y4; \
	VMULPS Y0, Y4, Y4; \
	VADDPS Y4, Y3, Y3; \
	VSQRTPS Y3, Y4; \
	VMULPS Y12, Y4, Y4; \
	VADDPS Y11, Y4, Y4; \
	VMULPS Y14, Y1, Y5; \
	VDIVPS Y4, Y5, Y5; \
	VMULPS Y13, Y6, Y6; \
	VSUBPS Y5, Y6, Y6

// func adamwAVX2(p, grad, m, v *float32, n int, c *AdamWCoef)
TEXT ·adamwAVX2(SB), NOSPLIT, $0-48
	MOVQ p+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ v+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), AX
	MOVQ AX, R8
	VBROADCASTSS 0(AX), Y7
	VBROADCASTSS 4(AX), Y8
	VBROADCASTSS 8(AX), Y9
	VBROADCASTSS 12(AX), Y10
	VBROADCASTSS 16(AX), Y11
	VBROADCASTSS 20(AX), Y12
	VBROADCASTSS 24(AX), Y13
	VBROADCASTSS 28(AX), Y14

loop:
	CMPQ CX, $8
	JLT  tail
	VMOVUPS (SI), Y0
	VMOVUPS (DX), Y1
	VMOVUPS (BX), Y3
	VMOVUPS (DI), Y6
	ADAMW
	VMOVUPS Y1, (DX)
	VMOVUPS Y3, (BX)
	VMOVUPS Y6, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, BX
	SUBQ $8, CX
	JMP  loop

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMASKMOVPS (SI), Y15, Y0
	VMASKMOVPS (DX), Y15, Y1
	VMASKMOVPS (BX), Y15, Y3
	VMASKMOVPS (DI), Y15, Y6
	ADAMW
	VMASKMOVPS Y1, Y15, (DX)
	VMASKMOVPS Y3, Y15, (BX)
	VMASKMOVPS Y6, Y15, (DI)

done:
	VZEROUPPER
	RET

// func sumSquares64AVX2(x *float32, n int) float64
// Y0 holds SumSquares64's running sums s0…s3, one per lane: 16 elements a
// trip as four groups of four, in order, then groups of four, then the
// last n mod 4 into s0 alone.
TEXT ·sumSquares64AVX2(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPD Y0, Y0, Y0

loop16:
	CMPQ      CX, $16
	JLT       loop4
	VCVTPS2PD 0(SI), Y1
	VCVTPS2PD 16(SI), Y2
	VCVTPS2PD 32(SI), Y3
	VCVTPS2PD 48(SI), Y4
	VMULPD    Y1, Y1, Y1
	VMULPD    Y2, Y2, Y2
	VMULPD    Y3, Y3, Y3
	VMULPD    Y4, Y4, Y4
	VADDPD    Y1, Y0, Y0
	VADDPD    Y2, Y0, Y0
	VADDPD    Y3, Y0, Y0
	VADDPD    Y4, Y0, Y0
	ADDQ      $64, SI
	SUBQ      $16, CX
	JMP       loop16

loop4:
	CMPQ      CX, $4
	JLT       rest
	VCVTPS2PD (SI), Y1
	VMULPD    Y1, Y1, Y1
	VADDPD    Y1, Y0, Y0
	ADDQ      $16, SI
	SUBQ      $4, CX
	JMP       loop4

rest:
	VEXTRACTF128 $1, Y0, X3 // s2, s3
	VPERMILPD    $1, X0, X4 // s1

single:
	TESTQ     CX, CX
	JZ        done
	VXORPD    X5, X5, X5
	VCVTSS2SD (SI), X5, X5
	VMULSD    X5, X5, X5
	VADDSD    X5, X0, X0   // s0 += x²
	ADDQ      $4, SI
	DECQ      CX
	JMP       single

done:
	VADDSD    X4, X0, X0 // s0 + s1
	VPERMILPD $1, X3, X5 // s3
	VADDSD    X5, X3, X3 // s2 + s3
	VADDSD    X3, X0, X0
	VZEROUPPER
	MOVSD     X0, ret+16(FP)
	RET

// func sumSquares64x4AVX2(x *[4]*float32, n int, sums *[16]float64)
// Y0–Y3 hold the running sums s0…s3 of slices 0–3, one per lane, each
// taking its groups of four in order as sumSquares64AVX2's Y0 does: two
// groups of each slice a trip, then one. n is a multiple of 4; the rest
// and the final additions are the caller's.
TEXT ·sumSquares64x4AVX2(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), AX
	MOVQ   0(AX), SI
	MOVQ   8(AX), DI
	MOVQ   16(AX), R8
	MOVQ   24(AX), R9
	MOVQ   n+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

x4loop8:
	CMPQ      CX, $8
	JLT       x4loop4
	VCVTPS2PD 0(SI), Y4
	VCVTPS2PD 0(DI), Y5
	VCVTPS2PD 0(R8), Y6
	VCVTPS2PD 0(R9), Y7
	VCVTPS2PD 16(SI), Y8
	VCVTPS2PD 16(DI), Y9
	VCVTPS2PD 16(R8), Y10
	VCVTPS2PD 16(R9), Y11
	VMULPD    Y4, Y4, Y4
	VMULPD    Y5, Y5, Y5
	VMULPD    Y6, Y6, Y6
	VMULPD    Y7, Y7, Y7
	VMULPD    Y8, Y8, Y8
	VMULPD    Y9, Y9, Y9
	VMULPD    Y10, Y10, Y10
	VMULPD    Y11, Y11, Y11
	VADDPD    Y4, Y0, Y0
	VADDPD    Y5, Y1, Y1
	VADDPD    Y6, Y2, Y2
	VADDPD    Y7, Y3, Y3
	VADDPD    Y8, Y0, Y0
	VADDPD    Y9, Y1, Y1
	VADDPD    Y10, Y2, Y2
	VADDPD    Y11, Y3, Y3
	ADDQ      $32, SI
	ADDQ      $32, DI
	ADDQ      $32, R8
	ADDQ      $32, R9
	SUBQ      $8, CX
	JMP       x4loop8

x4loop4:
	CMPQ      CX, $4
	JLT       x4done
	VCVTPS2PD 0(SI), Y4
	VCVTPS2PD 0(DI), Y5
	VCVTPS2PD 0(R8), Y6
	VCVTPS2PD 0(R9), Y7
	VMULPD    Y4, Y4, Y4
	VMULPD    Y5, Y5, Y5
	VMULPD    Y6, Y6, Y6
	VMULPD    Y7, Y7, Y7
	VADDPD    Y4, Y0, Y0
	VADDPD    Y5, Y1, Y1
	VADDPD    Y6, Y2, Y2
	VADDPD    Y7, Y3, Y3

x4done:
	MOVQ    sums+16(FP), AX
	VMOVUPD Y0, 0(AX)
	VMOVUPD Y1, 32(AX)
	VMOVUPD Y2, 64(AX)
	VMOVUPD Y3, 96(AX)
	VZEROUPPER
	RET

// func fence()
TEXT ·fence(SB), NOSPLIT, $0-0
	SFENCE
	RET

// func copyStreamAVX2(dst, src *float32, n int)
//
// Copies n floats, n a multiple of 8 and dst on a 32-byte boundary, with
// streaming (non-temporal) stores.
TEXT ·copyStreamAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

loop:
	TESTQ CX, CX
	JZ    done
	VMOVUPS (SI), Y0
	VMOVNTPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop

done:
	VZEROUPPER
	RET
