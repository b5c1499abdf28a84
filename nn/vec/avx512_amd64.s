//go:build amd64 && !purego

#include "textflag.h"
#include "consts_amd64.h"

// AVX-512 (F, DQ) kernels: 16 float32 lanes per vector. A loop takes whole
// vectors; the last 1–15 elements are loaded and stored under the mask K1,
// so no kernel reads or writes past its slices. Register use, where noted:
// Z16–Z28 the exp constants (LOADEXP), Z29 ABS, Z30 ERFP, Z31 HALF.

// LOADEXP broadcasts the constants of EXP into Z16–Z28.
#define LOADEXP \
	VBROADCASTSS consts<>+LOG2E(SB), Z16; \
	VBROADCASTSS consts<>+ROUND(SB), Z17; \
	VBROADCASTSS consts<>+NLN2HI(SB), Z18; \
	VBROADCASTSS consts<>+NLN2LO(SB), Z19; \
	VBROADCASTSS consts<>+C2(SB), Z20; \
	VBROADCASTSS consts<>+C6(SB), Z21; \
	VBROADCASTSS consts<>+C24(SB), Z22; \
	VBROADCASTSS consts<>+C120(SB), Z23; \
	VBROADCASTSS consts<>+C720(SB), Z24; \
	VBROADCASTSS consts<>+C5040(SB), Z25; \
	VBROADCASTSS consts<>+ONE(SB), Z26; \
	VBROADCASTSS consts<>+EXPMIN(SB), Z27; \
	VBROADCASTSS consts<>+EXPHI(SB), Z28

// LOADERF broadcasts ABS, ERFP and HALF into Z29–Z31.
#define LOADERF \
	VBROADCASTSS consts<>+ABS(SB), Z29; \
	VBROADCASTSS consts<>+ERFP(SB), Z30; \
	VBROADCASTSS consts<>+HALF(SB), Z31

// EXP sets out = e^in lane-wise: in is clamped to ≤ 89 (NaN passes), split
// as k·ln2 + r with k = round(in·log2e) and |r| ≤ ln2/2, e^r is the
// degree-7 Taylor polynomial in Estrin's form, and VSCALEFPS multiplies by
// 2^k (overflowing to +Inf past e^88.72). Lanes with in < EXPMIN are set to
// 0. Clobbers Z2–Z6 and K2; in and out must be other registers.
#define EXP(in, out) \
	VMINPS in, Z28, Z2; \
	VMOVAPS Z17, Z3; \
	VFMADD231PS Z16, Z2, Z3; \
	VSUBPS Z17, Z3, Z3; \
	VFMADD231PS Z18, Z3, Z2; \
	VFMADD231PS Z19, Z3, Z2; \
	VMULPS Z2, Z2, Z4; \
	VMOVAPS Z21, Z5; \
	VFMADD213PS Z20, Z2, Z5; \
	VMOVAPS Z23, Z6; \
	VFMADD213PS Z22, Z2, Z6; \
	VMOVAPS Z25, out; \
	VFMADD213PS Z24, Z2, out; \
	VFMADD213PS Z6, Z4, out; \
	VFMADD213PS Z5, Z4, out; \
	VFMADD213PS Z2, Z4, out; \
	VADDPS Z26, out, out; \
	VSCALEFPS Z3, out, out; \
	VCMPPS $5, Z27, in, K2; \
	VMOVAPS.Z out, K2, out

// ERFC sets out = erfc(z) for z = |x| ≥ 0 (or NaN) given e = e^(−z²):
// t·P(t)·e with t = 1/(1 + ERFP·z). Clobbers Z13; out must differ from
// z, e and Z13.
#define ERFC(z, e, out) \
	VMOVAPS Z26, Z13; \
	VFMADD231PS Z30, z, Z13; \
	VDIVPS Z13, Z26, Z13; \
	VBROADCASTSS consts<>+A5(SB), out; \
	VFMADD213PS.BCST consts<>+A4(SB), Z13, out; \
	VFMADD213PS.BCST consts<>+A3(SB), Z13, out; \
	VFMADD213PS.BCST consts<>+A2(SB), Z13, out; \
	VFMADD213PS.BCST consts<>+A1(SB), Z13, out; \
	VMULPS Z13, out, out; \
	VMULPS e, out, out

// TAILMASK sets K1 to the low CX bits (CX in 1…15). Clobbers AX.
#define TAILMASK \
	MOVL $1, AX; \
	SHLL CX, AX; \
	DECL AX; \
	KMOVW AX, K1

// ELEMENTWISE2(OP) is the body of a kernel dst[i] = x[i] OP y[i] for
// func(dst, x, y *float32, n int): two vectors a step, then one, then
// the masked tail.
#define ELEMENTWISE2(OP) \
	MOVQ dst+0(FP), DI; \
	MOVQ x+8(FP), SI; \
	MOVQ y+16(FP), DX; \
	MOVQ n+24(FP), CX; \
loop2:; \
	CMPQ CX, $32; \
	JLT  loop1; \
	VMOVUPS (SI), Z0; \
	VMOVUPS 64(SI), Z1; \
	OP (DX), Z0, Z0; \
	OP 64(DX), Z1, Z1; \
	VMOVUPS Z0, (DI); \
	VMOVUPS Z1, 64(DI); \
	ADDQ $128, SI; \
	ADDQ $128, DX; \
	ADDQ $128, DI; \
	SUBQ $32, CX; \
	JMP  loop2; \
loop1:; \
	CMPQ CX, $16; \
	JLT  tail; \
	VMOVUPS (SI), Z0; \
	OP (DX), Z0, Z0; \
	VMOVUPS Z0, (DI); \
	ADDQ $64, SI; \
	ADDQ $64, DX; \
	ADDQ $64, DI; \
	SUBQ $16, CX; \
tail:; \
	TESTQ CX, CX; \
	JZ    done; \
	TAILMASK; \
	VMOVUPS.Z (SI), K1, Z0; \
	VMOVUPS.Z (DX), K1, Z1; \
	OP Z1, Z0, Z0; \
	VMOVUPS Z0, K1, (DI); \
done:; \
	VZEROUPPER; \
	RET

// HSUM adds the 16 lanes of Z0 into X0. Clobbers Z1.
#define HSUM \
	VEXTRACTF64X4 $1, Z0, Y1; \
	VADDPS Y1, Y0, Y0; \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS X1, X0, X0; \
	VMOVHLPS X0, X0, X1; \
	VADDPS X1, X0, X0; \
	VMOVSHDUP X0, X1; \
	VADDSS X1, X0, X0

// ROWS2(L2, L1, TAIL, DONE, TWO, ONE, MASKED) walks the n floats at SI,
// dst at DI, n in CX: TWO on two vectors a step (at 0 and 64 from SI and
// DI), then ONE on one, then MASKED on the tail under K1 (TAILMASK); L2…
// DONE are its labels. Clobbers K1, AX and what the steps clobber.
#define ROWS2(L2, L1, TAIL, DONE, TWO, ONE, MASKED) \
L2:; \
	CMPQ CX, $32; \
	JLT  L1; \
	TWO; \
	ADDQ $128, SI; \
	ADDQ $128, DI; \
	SUBQ $32, CX; \
	JMP  L2; \
L1:; \
	CMPQ CX, $16; \
	JLT  TAIL; \
	ONE; \
	ADDQ $64, SI; \
	ADDQ $64, DI; \
	SUBQ $16, CX; \
TAIL:; \
	TESTQ CX, CX; \
	JZ    DONE; \
	TAILMASK; \
	MASKED; \
DONE:

// The steps of EXPSUBSUM: dst = e^(x−m), summed into Z8 and Z9.
#define EXPSUB_TWO \
	VMOVUPS (SI), Z0; \
	VSUBPS  Z7, Z0, Z0; \
	EXP(Z0, Z1); \
	VMOVUPS Z1, (DI); \
	VADDPS  Z1, Z8, Z8; \
	VMOVUPS 64(SI), Z0; \
	VSUBPS  Z7, Z0, Z0; \
	EXP(Z0, Z1); \
	VMOVUPS Z1, 64(DI); \
	VADDPS  Z1, Z9, Z9
#define EXPSUB_ONE \
	VMOVUPS (SI), Z0; \
	VSUBPS  Z7, Z0, Z0; \
	EXP(Z0, Z1); \
	VMOVUPS Z1, (DI); \
	VADDPS  Z1, Z8, Z8
#define EXPSUB_MASKED \
	VMOVUPS.Z (SI), K1, Z0; \
	VSUBPS  Z7, Z0, Z0; \
	EXP(Z0, Z1); \
	VMOVUPS Z1, K1, (DI); \
	VADDPS  Z1, Z9, K1, Z9

// EXPSUBSUM(L2, L1, TAIL, DONE) sets dst[i] = e^(x[i]−m) for the n floats
// at SI, dst at DI, n in CX and m broadcast in Z7, and leaves Σ dst[i] in
// X0: two vectors a step into two sums, then one, then the masked tail
// (ROWS2); L2…DONE are its labels. Needs LOADEXP; clobbers Z0-Z6, Z8, Z9.
#define EXPSUBSUM(L2, L1, TAIL, DONE) \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	ROWS2(L2, L1, TAIL, DONE, EXPSUB_TWO, EXPSUB_ONE, EXPSUB_MASKED); \
	VADDPS Z9, Z8, Z0; \
	HSUM

// func expAVX512(dst, x *float32, n int)
TEXT ·expAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	LOADEXP

loop:
	CMPQ CX, $16
	JLT  tail
	VMOVUPS (SI), Z0
	EXP(Z0, Z1)
	VMOVUPS Z1, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  loop

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMOVUPS.Z (SI), K1, Z0
	EXP(Z0, Z1)
	VMOVUPS Z1, K1, (DI)

done:
	VZEROUPPER
	RET

// func expSubSumAVX512(dst, x *float32, n int, m float32) float32
TEXT ·expSubSumAVX512(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Z7
	LOADEXP
	EXPSUBSUM(loop2, loop1, tail, done)
	MOVSS X0, ret+32(FP)
	VZEROUPPER
	RET

// MAXOF(L4, L1, TAIL, DONE, NAN, END) leaves in X0 the largest of the n
// floats at SI, n ≥ 1 in CX, or the quiet NaN 0x7fc00000 if one of them
// is a NaN: four vectors a step into four maxima, then one, then the
// masked tail; L4…END are its labels. Clobbers Z0-Z7, K1-K3, AX.
#define MAXOF(L4, L1, TAIL, DONE, NAN, END) \
	VBROADCASTSS consts<>+NEGINF(SB), Z0; \
	VMOVAPS Z0, Z1; \
	VMOVAPS Z0, Z2; \
	VMOVAPS Z0, Z3; \
	KXORW K3, K3, K3; \
L4:; \
	CMPQ CX, $64; \
	JLT  L1; \
	VMOVUPS (SI), Z4; \
	VMOVUPS 64(SI), Z5; \
	VMOVUPS 128(SI), Z6; \
	VMOVUPS 192(SI), Z7; \
	VMAXPS  Z4, Z0, Z0; \
	VMAXPS  Z5, Z1, Z1; \
	VMAXPS  Z6, Z2, Z2; \
	VMAXPS  Z7, Z3, Z3; \
	VCMPPS  $3, Z5, Z4, K2; \
	KORW    K2, K3, K3; \
	VCMPPS  $3, Z7, Z6, K2; \
	KORW    K2, K3, K3; \
	ADDQ $256, SI; \
	SUBQ $64, CX; \
	JMP  L4; \
L1:; \
	CMPQ CX, $16; \
	JLT  TAIL; \
	VMOVUPS (SI), Z4; \
	VMAXPS  Z4, Z0, Z0; \
	VCMPPS  $3, Z4, Z4, K2; \
	KORW    K2, K3, K3; \
	ADDQ $64, SI; \
	SUBQ $16, CX; \
	JMP  L1; \
TAIL:; \
	TESTQ CX, CX; \
	JZ    DONE; \
	TAILMASK; \
	VBROADCASTSS consts<>+NEGINF(SB), Z4; \
	VMOVUPS (SI), K1, Z4; \
	VMAXPS  Z4, Z0, Z0; \
	VCMPPS  $3, Z4, Z4, K2; \
	KORW    K2, K3, K3; \
DONE:; \
	KORTESTW K3, K3; \
	JNZ      NAN; \
	VMAXPS Z1, Z0, Z0; \
	VMAXPS Z3, Z2, Z2; \
	VMAXPS Z2, Z0, Z0; \
	VEXTRACTF64X4 $1, Z0, Y1; \
	VMAXPS Y1, Y0, Y0; \
	VEXTRACTF128 $1, Y0, X1; \
	VMAXPS X1, X0, X0; \
	VMOVHLPS X0, X0, X1; \
	VMAXPS X1, X0, X0; \
	VMOVSHDUP X0, X1; \
	VMAXSS X1, X0, X0; \
	JMP END; \
NAN:; \
	MOVL $0x7fc00000, AX; \
	VMOVD AX, X0; \
END:

// func maxAVX512(x *float32, n int) float32
TEXT ·maxAVX512(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MAXOF(loop4, loop1, tail, done, nan, end)
	MOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func sumAVX512(x *float32, n int) float32
TEXT ·sumAVX512(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

loop4:
	CMPQ CX, $64
	JLT  loop1
	VADDPS (SI), Z0, Z0
	VADDPS 64(SI), Z1, Z1
	VADDPS 128(SI), Z2, Z2
	VADDPS 192(SI), Z3, Z3
	ADDQ $256, SI
	SUBQ $64, CX
	JMP  loop4

loop1:
	CMPQ CX, $16
	JLT  tail
	VADDPS (SI), Z0, Z0
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  loop1

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMOVUPS.Z (SI), K1, Z4
	VADDPS Z4, Z1, Z1

done:
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	HSUM
	MOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func dotAVX512(x, y *float32, n int) float32
TEXT ·dotAVX512(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DX
	MOVQ n+16(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

loop4:
	CMPQ CX, $64
	JLT  loop1
	VMOVUPS (SI), Z4
	VMOVUPS 64(SI), Z5
	VMOVUPS 128(SI), Z6
	VMOVUPS 192(SI), Z7
	VFMADD231PS (DX), Z4, Z0
	VFMADD231PS 64(DX), Z5, Z1
	VFMADD231PS 128(DX), Z6, Z2
	VFMADD231PS 192(DX), Z7, Z3
	ADDQ $256, SI
	ADDQ $256, DX
	SUBQ $64, CX
	JMP  loop4

loop1:
	CMPQ CX, $16
	JLT  tail
	VMOVUPS (SI), Z4
	VFMADD231PS (DX), Z4, Z0
	ADDQ $64, SI
	ADDQ $64, DX
	SUBQ $16, CX
	JMP  loop1

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMOVUPS.Z (SI), K1, Z4
	VMOVUPS.Z (DX), K1, Z5
	VFMADD231PS Z5, Z4, Z1

done:
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	HSUM
	MOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func sumSqDevAVX512(x *float32, n int, m float32) float32
TEXT ·sumSqDevAVX512(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS m+16(FP), Z8
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

loop4:
	CMPQ CX, $64
	JLT  loop1
	VMOVUPS (SI), Z4
	VMOVUPS 64(SI), Z5
	VMOVUPS 128(SI), Z6
	VMOVUPS 192(SI), Z7
	VSUBPS Z8, Z4, Z4
	VSUBPS Z8, Z5, Z5
	VSUBPS Z8, Z6, Z6
	VSUBPS Z8, Z7, Z7
	VFMADD231PS Z4, Z4, Z0
	VFMADD231PS Z5, Z5, Z1
	VFMADD231PS Z6, Z6, Z2
	VFMADD231PS Z7, Z7, Z3
	ADDQ $256, SI
	SUBQ $64, CX
	JMP  loop4

loop1:
	CMPQ CX, $16
	JLT  tail
	VMOVUPS (SI), Z4
	VSUBPS Z8, Z4, Z4
	VFMADD231PS Z4, Z4, Z0
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  loop1

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMOVUPS.Z (SI), K1, Z4
	VSUBPS Z8, Z4, Z4
	VFMADD231PS Z4, Z4, K1, Z1

done:
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	HSUM
	MOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// The steps of SCALEROWS: dst = a·x.
#define SCALE_TWO \
	VMULPS (SI), Z7, Z0; \
	VMULPS 64(SI), Z7, Z1; \
	VMOVUPS Z0, (DI); \
	VMOVUPS Z1, 64(DI)
#define SCALE_ONE \
	VMULPS (SI), Z7, Z0; \
	VMOVUPS Z0, (DI)
#define SCALE_MASKED \
	VMOVUPS.Z (SI), K1, Z0; \
	VMULPS Z7, Z0, Z0; \
	VMOVUPS Z0, K1, (DI)

// SCALEROWS(L2, L1, TAIL, DONE) sets dst[i] = a·x[i] for the n floats at
// SI, dst at DI, n in CX and a broadcast in Z7: two vectors a step, then
// one, then the masked tail (ROWS2); L2…DONE are its labels. Clobbers
// Z0, Z1, K1, AX.
#define SCALEROWS(L2, L1, TAIL, DONE) \
	ROWS2(L2, L1, TAIL, DONE, SCALE_TWO, SCALE_ONE, SCALE_MASKED)

// func scaleAVX512(dst, x *float32, n int, a float32)
TEXT ·scaleAVX512(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS a+24(FP), Z7
	SCALEROWS(loop2, loop1, tail, done)
	VZEROUPPER
	RET

// func softmaxAVX512(dst, x *float32, n, rows, ld int)
//
// For each of rows rows of n floats (dst's and x's ld apart, R8 and R9 at
// this row's): max, then expSubSum with it, then scale by 1/Σ: the same
// instructions in the same order as maxAVX512, expSubSumAVX512 and
// scaleAVX512, so the same bits.
TEXT ·softmaxAVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), R8
	MOVQ x+8(FP), R9
	MOVQ rows+24(FP), R10
	LOADEXP

row:
	MOVQ R9, SI
	MOVQ n+16(FP), CX
	MAXOF(mloop4, mloop1, mtail, mdone, mnan, mend)
	VBROADCASTSS X0, Z7
	MOVQ R8, DI
	MOVQ R9, SI
	MOVQ n+16(FP), CX
	EXPSUBSUM(eloop2, eloop1, etail, edone)
	VMOVSS consts<>+ONE(SB), X1
	VDIVSS X0, X1, X1
	VBROADCASTSS X1, Z7
	MOVQ R8, DI
	MOVQ DI, SI
	MOVQ n+16(FP), CX
	SCALEROWS(sloop2, sloop1, stail, sdone)
	MOVQ ld+32(FP), AX
	SHLQ $2, AX
	ADDQ AX, R8
	ADDQ AX, R9
	DECQ R10
	JNZ  row
	VZEROUPPER
	RET

// func addConstAVX512(dst, x *float32, n int, c float32)
TEXT ·addConstAVX512(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS c+24(FP), Z7

loop2:
	CMPQ CX, $32
	JLT  loop1
	VADDPS (SI), Z7, Z0
	VADDPS 64(SI), Z7, Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  loop2

loop1:
	CMPQ CX, $16
	JLT  tail
	VADDPS (SI), Z7, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMOVUPS.Z (SI), K1, Z0
	VADDPS Z7, Z0, Z0
	VMOVUPS Z0, K1, (DI)

done:
	VZEROUPPER
	RET

// func axpyAVX512(dst, x *float32, n int, a float32)
TEXT ·axpyAVX512(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS a+24(FP), Z7

loop2:
	CMPQ CX, $32
	JLT  loop1
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VFMADD231PS (SI), Z7, Z0
	VFMADD231PS 64(SI), Z7, Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  loop2

loop1:
	CMPQ CX, $16
	JLT  tail
	VMOVUPS (DI), Z0
	VFMADD231PS (SI), Z7, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMOVUPS.Z (DI), K1, Z0
	VMOVUPS.Z (SI), K1, Z1
	VFMADD231PS Z1, Z7, Z0
	VMOVUPS Z0, K1, (DI)

done:
	VZEROUPPER
	RET

// func mulAVX512(dst, x, y *float32, n int)
TEXT ·mulAVX512(SB), NOSPLIT, $0-32
	ELEMENTWISE2(VMULPS)

// func addAVX512(dst, x, y *float32, n int)
TEXT ·addAVX512(SB), NOSPLIT, $0-32
	ELEMENTWISE2(VADDPS)

// ZEROUNLESS(PRED) is the body of a kernel dst[i] = y[i] where x[i] PRED 0
// holds (a VCMPPS predicate), else +0, for func(dst, x, y *float32, n
// int): one vector a step, then the masked tail, y read only in the lanes
// it is kept.
#define ZEROUNLESS(PRED) \
	MOVQ dst+0(FP), DI; \
	MOVQ x+8(FP), SI; \
	MOVQ y+16(FP), DX; \
	MOVQ n+24(FP), CX; \
	VPXORD Z15, Z15, Z15; \
loop:; \
	CMPQ CX, $16; \
	JLT  tail; \
	VMOVUPS (SI), Z0; \
	VCMPPS PRED, Z15, Z0, K2; \
	VMOVUPS.Z (DX), K2, Z1; \
	VMOVUPS Z1, (DI); \
	ADDQ $64, SI; \
	ADDQ $64, DX; \
	ADDQ $64, DI; \
	SUBQ $16, CX; \
	JMP  loop; \
tail:; \
	TESTQ CX, CX; \
	JZ    done; \
	TAILMASK; \
	VMOVUPS.Z (SI), K1, Z0; \
	VCMPPS PRED, Z15, Z0, K1, K2; \
	VMOVUPS.Z (DX), K2, Z1; \
	VMOVUPS Z1, K1, (DI); \
done:; \
	VZEROUPPER; \
	RET

// func reluAVX512(dst, x, y *float32, n int)
//
// NLT_UQ: y (x itself) kept where x is not below zero, −0 and NaN
// included.
TEXT ·reluAVX512(SB), NOSPLIT, $0-32
	ZEROUNLESS($21)

// func reluGradAVX512(dst, x, y *float32, n int)
//
// GT_OQ: y (dy) kept where x (ReLU's output) is above zero, NaN excluded.
TEXT ·reluGradAVX512(SB), NOSPLIT, $0-32
	ZEROUNLESS($30)

// func mulDiffAVX512(dst, y, x *float32, n int, c float32)
TEXT ·mulDiffAVX512(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ y+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	VBROADCASTSS c+32(FP), Z7

loop1:
	CMPQ CX, $16
	JLT  tail
	VMOVUPS (SI), Z0
	VSUBPS Z7, Z0, Z0
	VMULPS (DX), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  loop1

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (DX), K1, Z1
	VSUBPS Z7, Z0, Z0
	VMULPS Z1, Z0, Z0
	VMOVUPS Z0, K1, (DI)

done:
	VZEROUPPER
	RET

// ERF sets Z8 = erf(Z0) = sign(x)·(1 − erfc(|x|)). Clobbers Z2–Z6, Z10–Z13, K2.
#define ERF \
	VANDPS Z29, Z0, Z12; \
	VMULPS Z12, Z12, Z10; \
	VPXORD.BCST consts<>+SIGN(SB), Z10, Z10; \
	EXP(Z10, Z11); \
	ERFC(Z12, Z11, Z8); \
	VSUBPS Z8, Z26, Z8; \
	VPANDD.BCST consts<>+SIGN(SB), Z0, Z10; \
	VPXORD Z10, Z8, Z8

// func erfAVX512(dst, x *float32, n int)
TEXT ·erfAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	LOADEXP
	LOADERF

loop:
	CMPQ CX, $16
	JLT  tail
	VMOVUPS (SI), Z0
	ERF
	VMOVUPS Z8, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  loop

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMOVUPS.Z (SI), K1, Z0
	ERF
	VMOVUPS Z8, K1, (DI)

done:
	VZEROUPPER
	RET

// NORMAL sets Z14 = Φ(x) and Z11 = e^(−x²/2) for x in Z0, with Φ(x) =
// 1 − erfc(|x|/√2)/2 for x ≥ 0 and erfc(|x|/√2)/2 otherwise. Z15 must be
// zero. Clobbers Z2–Z6, Z10–Z13, K2, K3.
#define NORMAL \
	VMULPS Z0, Z0, Z10; \
	VMULPS.BCST consts<>+NHALF(SB), Z10, Z10; \
	EXP(Z10, Z11); \
	VANDPS Z29, Z0, Z12; \
	VMULPS.BCST consts<>+INVSQRT2(SB), Z12, Z12; \
	ERFC(Z12, Z11, Z14); \
	VMULPS Z31, Z14, Z14; \
	VCMPPS $13, Z15, Z0, K3; \
	VSUBPS Z14, Z26, K3, Z14

// func geluAVX512(dst, deriv, x *float32, n int, stream bool)
//
// With stream set and deriv on a 64-byte boundary, deriv's whole vectors
// are written with streaming (non-temporal) stores.
TEXT ·geluAVX512(SB), NOSPLIT, $0-33
	MOVQ dst+0(FP), DI
	MOVQ deriv+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	MOVBQZX stream+32(FP), R8
	TESTQ $63, DX
	JZ    aligned
	XORQ  R8, R8

aligned:
	LOADEXP
	LOADERF
	VPXORD Z15, Z15, Z15
	VBROADCASTSS consts<>+INVSQRT2PI(SB), Z7

loop:
	CMPQ CX, $16
	JLT  tail
	VMOVUPS (SI), Z0
	NORMAL
	TESTQ DI, DI
	JZ    noy
	VMULPS Z14, Z0, Z8
	VMOVUPS Z8, (DI)
	ADDQ $64, DI

noy:
	TESTQ DX, DX
	JZ    next
	VMULPS Z7, Z11, Z9
	VFMADD213PS Z14, Z0, Z9
	TESTQ R8, R8
	JNZ   streamed
	VMOVUPS Z9, (DX)
	ADDQ $64, DX
	JMP   next

streamed:
	VMOVNTPS Z9, (DX)
	ADDQ $64, DX

next:
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  loop

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMOVUPS.Z (SI), K1, Z0
	NORMAL
	TESTQ DI, DI
	JZ    tailnoy
	VMULPS Z14, Z0, Z8
	VMOVUPS Z8, K1, (DI)

tailnoy:
	TESTQ DX, DX
	JZ    done
	VMULPS Z7, Z11, Z9
	VFMADD213PS Z14, Z0, Z9
	VMOVUPS Z9, K1, (DX)

done:
	VZEROUPPER
	RET

// func lnRowAVX512(y, x, w, b *float32, n int, mean, rstd float32)
TEXT ·lnRowAVX512(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), DX
	MOVQ b+24(FP), BX
	MOVQ n+32(FP), CX
	VBROADCASTSS mean+40(FP), Z7
	VBROADCASTSS rstd+44(FP), Z8

loop:
	CMPQ CX, $16
	JLT  tail
	VMOVUPS (SI), Z0
	VMOVUPS (BX), Z1
	VSUBPS Z7, Z0, Z0
	VMULPS Z8, Z0, Z0
	VFMADD231PS (DX), Z0, Z1
	VMOVUPS Z1, (DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, BX
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  loop

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (BX), K1, Z1
	VMOVUPS.Z (DX), K1, Z2
	VSUBPS Z7, Z0, Z0
	VMULPS Z8, Z0, Z0
	VFMADD231PS Z2, Z0, Z1
	VMOVUPS Z1, K1, (DI)

done:
	VZEROUPPER
	RET

// func lnGradSumsAVX512(x, dy, w *float32, n int, mean, rstd float32) (sg, sgx float32)
TEXT ·lnGradSumsAVX512(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ dy+8(FP), DX
	MOVQ w+16(FP), BX
	MOVQ n+24(FP), CX
	VBROADCASTSS mean+32(FP), Z7
	VBROADCASTSS rstd+36(FP), Z8
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13

loop2:
	CMPQ CX, $32
	JLT  loop1
	VMOVUPS (DX), Z0
	VMOVUPS 64(DX), Z1
	VMULPS (BX), Z0, Z0
	VMULPS 64(BX), Z1, Z1
	VMOVUPS (SI), Z2
	VMOVUPS 64(SI), Z3
	VSUBPS Z7, Z2, Z2
	VSUBPS Z7, Z3, Z3
	VMULPS Z8, Z2, Z2
	VMULPS Z8, Z3, Z3
	VADDPS Z0, Z10, Z10
	VADDPS Z1, Z11, Z11
	VFMADD231PS Z2, Z0, Z12
	VFMADD231PS Z3, Z1, Z13
	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, BX
	SUBQ $32, CX
	JMP  loop2

loop1:
	CMPQ CX, $16
	JLT  tail
	VMOVUPS (DX), Z0
	VMULPS (BX), Z0, Z0
	VMOVUPS (SI), Z2
	VSUBPS Z7, Z2, Z2
	VMULPS Z8, Z2, Z2
	VADDPS Z0, Z10, Z10
	VFMADD231PS Z2, Z0, Z12
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, BX
	SUBQ $16, CX

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMOVUPS.Z (DX), K1, Z0
	VMOVUPS.Z (BX), K1, Z1
	VMULPS Z1, Z0, Z0
	VMOVUPS.Z (SI), K1, Z2
	VSUBPS Z7, Z2, Z2
	VMULPS Z8, Z2, Z2
	VADDPS Z0, Z11, Z11
	VFMADD231PS Z2, Z0, K1, Z13

done:
	VADDPS Z11, Z10, Z0
	HSUM
	MOVSS X0, sg+40(FP)
	VADDPS Z13, Z12, Z0
	HSUM
	MOVSS X0, sgx+44(FP)
	VZEROUPPER
	RET

// func lnGradRowAVX512(dx, x, dy, w *float32, n int, mean, rstd, a, c float32)
TEXT ·lnGradRowAVX512(SB), NOSPLIT, $0-56
	MOVQ dx+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ dy+16(FP), DX
	MOVQ w+24(FP), BX
	MOVQ n+32(FP), CX
	VBROADCASTSS mean+40(FP), Z7
	VBROADCASTSS rstd+44(FP), Z8
	VBROADCASTSS a+48(FP), Z9
	VBROADCASTSS c+52(FP), Z10

loop:
	CMPQ CX, $16
	JLT  tail
	VMOVUPS (DX), Z0
	VMULPS (BX), Z0, Z0
	VSUBPS Z9, Z0, Z0
	VMOVUPS (SI), Z1
	VSUBPS Z7, Z1, Z1
	VMULPS Z8, Z1, Z1
	VFNMADD231PS Z10, Z1, Z0
	VMULPS Z8, Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, BX
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  loop

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMOVUPS.Z (DX), K1, Z0
	VMOVUPS.Z (BX), K1, Z2
	VMULPS Z2, Z0, Z0
	VSUBPS Z9, Z0, Z0
	VMOVUPS.Z (SI), K1, Z1
	VSUBPS Z7, Z1, Z1
	VMULPS Z8, Z1, Z1
	VFNMADD231PS Z10, Z1, Z0
	VMULPS Z8, Z0, Z0
	VMOVUPS Z0, K1, (DI)

done:
	VZEROUPPER
	RET

// func lnGradWeightAVX512(acc *float64, x, dy *float32, n int, mean, rstd float32)
TEXT ·lnGradWeightAVX512(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ dy+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS mean+32(FP), Z7
	VBROADCASTSS rstd+36(FP), Z8

loop:
	CMPQ CX, $16
	JLT  tail
	VMOVUPS (SI), Z0
	VSUBPS Z7, Z0, Z0
	VMULPS Z8, Z0, Z0
	VMULPS (DX), Z0, Z0
	VCVTPS2PD Y0, Z1
	VEXTRACTF64X4 $1, Z0, Y2
	VCVTPS2PD Y2, Z2
	VADDPD (DI), Z1, Z1
	VADDPD 64(DI), Z2, Z2
	VMOVUPD Z1, (DI)
	VMOVUPD Z2, 64(DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $128, DI
	SUBQ $16, CX
	JMP  loop

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	KSHIFTRW $8, K1, K2
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (DX), K1, Z3
	VSUBPS Z7, Z0, Z0
	VMULPS Z8, Z0, Z0
	VMULPS Z3, Z0, Z0
	VCVTPS2PD Y0, Z1
	VEXTRACTF64X4 $1, Z0, Y2
	VCVTPS2PD Y2, Z2
	VMOVUPD.Z (DI), K1, Z3
	VMOVUPD.Z 64(DI), K2, Z4
	VADDPD Z3, Z1, Z1
	VADDPD Z4, Z2, Z2
	VMOVUPD Z1, K1, (DI)
	VMOVUPD Z2, K2, 64(DI)

done:
	VZEROUPPER
	RET

// ADAMW scales Z0 = g by GradScale (Z24) and updates Z1 = m, Z3 = v and
// Z6 = p from it, with the other coefficients in Z16–Z23 (the fields of
// AdamWCoef in order). Clobbers Z0, Z2, Z4, Z5.
#define ADAMW \
	VMULPS Z24, Z0, Z0; \
	VMULPS Z16, Z1, Z1; \
	VMULPS Z17, Z0, Z2; \
	VADDPS Z2, Z1, Z1; \
	VMULPS Z18, Z3, Z3; \
	VMULPS Z19, Z0, Z4; \
	VMULPS Z0, Z4, Z4; \
	VADDPS Z4, Z3, Z3; \
	VSQRTPS Z3, Z4; \
	VMULPS Z21, Z4, Z4; \
	VADDPS Z20, Z4, Z4; \
	VMULPS Z23, Z1, Z5; \
	VDIVPS Z4, Z5, Z5; \
	VMULPS Z22, Z6, Z6; \
	VSUBPS Z5, Z6, Z6

// func adamwAVX512(p, grad, m, v *float32, n int, c *AdamWCoef)
TEXT ·adamwAVX512(SB), NOSPLIT, $0-48
	MOVQ p+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ v+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), AX
	VBROADCASTSS 0(AX), Z16
	VBROADCASTSS 4(AX), Z17
	VBROADCASTSS 8(AX), Z18
	VBROADCASTSS 12(AX), Z19
	VBROADCASTSS 16(AX), Z20
	VBROADCASTSS 20(AX), Z21
	VBROADCASTSS 24(AX), Z22
	VBROADCASTSS 28(AX), Z23
	VBROADCASTSS 32(AX), Z24

loop:
	CMPQ CX, $16
	JLT  tail
	VMOVUPS (SI), Z0
	VMOVUPS (DX), Z1
	VMOVUPS (BX), Z3
	VMOVUPS (DI), Z6
	ADAMW
	VMOVUPS Z1, (DX)
	VMOVUPS Z3, (BX)
	VMOVUPS Z6, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, BX
	SUBQ $16, CX
	JMP  loop

tail:
	TESTQ CX, CX
	JZ    done
	TAILMASK
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (DX), K1, Z1
	VMOVUPS.Z (BX), K1, Z3
	VMOVUPS.Z (DI), K1, Z6
	ADAMW
	VMOVUPS Z1, K1, (DX)
	VMOVUPS Z3, K1, (BX)
	VMOVUPS Z6, K1, (DI)

done:
	VZEROUPPER
	RET

// func copyStreamAVX512(dst, src *float32, n int)
//
// Copies n floats, n a multiple of 16 and dst on a 64-byte boundary,
// with streaming (non-temporal) stores.
TEXT ·copyStreamAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

loop:
	TESTQ CX, CX
	JZ    done
	VMOVUPS (SI), Z0
	VMOVNTPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  loop

done:
	VZEROUPPER
	RET
