//go:build amd64 && !purego

#include "textflag.h"

DATA affinexc<>+0(SB)/8, $0.5
DATA affinexc<>+8(SB)/8, $1.5
DATA affinexc<>+16(SB)/8, $2.5
DATA affinexc<>+24(SB)/8, $3.5
GLOBL affinexc<>(SB), RODATA|NOPTR, $32

DATA affineconst<>+0(SB)/8, $0.5
DATA affineconst<>+8(SB)/8, $4.0
GLOBL affineconst<>(SB), RODATA|NOPTR, $16

DATA affinelanes<>+0(SB)/4, $0
DATA affinelanes<>+4(SB)/4, $1
DATA affinelanes<>+8(SB)/4, $2
DATA affinelanes<>+12(SB)/4, $3
GLOBL affinelanes<>(SB), RODATA|NOPTR, $16

// Frame: the row's constants broadcast to four lanes, then the group's
// positions.
#define M0 0(SP)
#define M1Y 32(SP)
#define M2 64(SP)
#define M3 96(SP)
#define M4Y 128(SP)
#define M5 160(SP)
#define WIDTH 192(SP)
#define HEIGHT 224(SP)
#define HALF 256(SP)
#define XC 288(SP)
#define FRACX 320(SP)
#define FRACY 352(SP)
#define INSIDE 384(SP)
#define IDX 416(SP)
#define IDX0 416(SP)
#define IDX1 420(SP)
#define IDX2 424(SP)
#define IDX3 428(SP)
#define WP4 432(SP)
#define BIAS4 448(SP)

// GATHER loads the four float32 taps at off(ptr) + IDX lanes, widened to
// float64, into dst.
#define GATHER(off, ptr, dst, dstx) \
	VPCMPEQD X14, X14, X14; \
	VGATHERDPS X14, off(ptr)(X9*4), dstx; \
	VCVTPS2PD dstx, dst

// LOAD loads the four float32 taps at off(ptr) + BX·4 + 0, 4, 8, 12 (the
// IDX lanes when they are consecutive), widened to float64, into dst.
#define LOAD(off, ptr, dst) \
	VCVTPS2PD off(ptr)(BX*4), dst

// CUBIC sets o to PIL's BICUBIC(v1, v2, v3, v4, d): p1 + d(p2 + d(p3 +
// d·p4)), p2 = v3 - v1, p3 = 2(v1 - v2) + v3 - v4, p4 = -v1 + v2 - v3 +
// v4, in PIL's order of operations; t1, t2 are clobbered.
#define CUBIC(v1, v2, v3, v4, d, o, t1, t2) \
	VSUBPD v2, v1, t1; \
	VADDPD t1, t1, t1; \
	VADDPD v3, t1, t1; \
	VSUBPD v4, t1, t1; \
	VSUBPD v1, v2, t2; \
	VSUBPD v3, t2, t2; \
	VADDPD v4, t2, t2; \
	VMULPD d, t2, o; \
	VADDPD t1, o, o; \
	VMULPD d, o, o; \
	VSUBPD v1, v3, t1; \
	VADDPD t1, o, o; \
	VMULPD d, o, o; \
	VADDPD v2, o, o

// TAPS4 loads the four consecutive float32 taps past each IDX lane of
// the row at ptr and transposes them: Y10…Y13 hold the taps at 0, 4, 8
// and 12 bytes past the lanes, widened to float64 (GATHER's values, from
// four loads and shuffles instead of four gathers). AX is clobbered.
#define TAPS4(ptr) \
	MOVLQSX IDX0, AX; \
	VMOVUPS (ptr)(AX*4), X10; \
	MOVLQSX IDX2, AX; \
	VINSERTF128 $1, (ptr)(AX*4), Y10, Y10; \
	MOVLQSX IDX1, AX; \
	VMOVUPS (ptr)(AX*4), X11; \
	MOVLQSX IDX3, AX; \
	VINSERTF128 $1, (ptr)(AX*4), Y11, Y11; \
	VUNPCKLPS Y11, Y10, Y12; \
	VUNPCKHPS Y11, Y10, Y13; \
	VPERMPD $0xD8, Y12, Y12; \
	VPERMPD $0xD8, Y13, Y13; \
	VCVTPS2PD X12, Y10; \
	VEXTRACTF128 $1, Y12, X12; \
	VCVTPS2PD X12, Y11; \
	VCVTPS2PD X13, Y12; \
	VEXTRACTF128 $1, Y13, X13; \
	VCVTPS2PD X13, Y13

// ROW4 sets o to the cubic along the row at ptr (taps at 0, 4, 8 and 12
// bytes past the IDX lanes) at FRACX.
#define ROW4(ptr, o) \
	TAPS4(ptr); \
	CUBIC(Y10, Y11, Y12, Y13, FRACX, o, Y4, Y5)

// ROW4C is ROW4 with consecutive IDX lanes.
#define ROW4C(ptr, o) \
	LOAD(0, ptr, Y10); \
	LOAD(4, ptr, Y11); \
	LOAD(8, ptr, Y12); \
	LOAD(12, ptr, Y13); \
	CUBIC(Y10, Y11, Y12, Y13, FRACX, o, Y4, Y5)

// func affineBicubicAVX2(dst *uint8, dstPlane int, src *float32, srcPlane, wp int, k *[8]float64, n, channels int, fill *float64)
//
// One output row of affineLevels, bicubic, n pixels (a positive multiple
// of 4) from x = 0: k holds m[0], m[1]·y', m[2], m[3], m[4]·y', m[5] and
// the image's width and height; src holds each channel's levels as
// float32, padded by two clamped pixels on every side, wp values a row,
// srcPlane values a channel; dst[c·dstPlane + x] is written. Four pixels
// at a time in float64, each value computed with PIL's operations in
// PIL's order (no fused multiply-add): affinePixels's values.
TEXT ·affineBicubicAVX2(SB), 0, $464-72
	MOVQ k+40(FP), AX
	VBROADCASTSD 0(AX), Y0
	VMOVUPD Y0, M0
	VBROADCASTSD 8(AX), Y0
	VMOVUPD Y0, M1Y
	VBROADCASTSD 16(AX), Y0
	VMOVUPD Y0, M2
	VBROADCASTSD 24(AX), Y0
	VMOVUPD Y0, M3
	VBROADCASTSD 32(AX), Y0
	VMOVUPD Y0, M4Y
	VBROADCASTSD 40(AX), Y0
	VMOVUPD Y0, M5
	VBROADCASTSD 48(AX), Y0
	VMOVUPD Y0, WIDTH
	VBROADCASTSD 56(AX), Y0
	VMOVUPD Y0, HEIGHT
	VBROADCASTSD affineconst<>+0(SB), Y0
	VMOVUPD Y0, HALF
	VMOVUPD affinexc<>(SB), Y0
	VMOVUPD Y0, XC
	MOVQ wp+32(FP), R15
	MOVQ R15, AX
	VMOVQ AX, X0
	VPBROADCASTD X0, X0
	VMOVDQU X0, WP4
	INCQ AX
	VMOVQ AX, X0
	VPBROADCASTD X0, X0
	VMOVDQU X0, BIAS4
	SHLQ $2, R15 // a padded row in bytes
	MOVQ dst+0(FP), DI
	MOVQ n+48(FP), CX

group:
	// The positions: u = m0·x' + m1·y' + m2, v = m3·x' + m4·y' + m5.
	VMOVUPD XC, Y0
	VMULPD M0, Y0, Y1
	VADDPD M1Y, Y1, Y1
	VADDPD M2, Y1, Y1
	VMULPD M3, Y0, Y2
	VADDPD M4Y, Y2, Y2
	VADDPD M5, Y2, Y2
	VBROADCASTSD affineconst<>+8(SB), Y3
	VADDPD Y3, Y0, Y0
	VMOVUPD Y0, XC
	// Inside: 0 <= u < w and 0 <= v < h; outside lanes sample (0, 0).
	VXORPD Y3, Y3, Y3
	VCMPPD $0x1D, Y3, Y1, Y4
	VCMPPD $0x11, WIDTH, Y1, Y5
	VANDPD Y5, Y4, Y4
	VCMPPD $0x1D, Y3, Y2, Y5
	VANDPD Y5, Y4, Y4
	VCMPPD $0x11, HEIGHT, Y2, Y5
	VANDPD Y5, Y4, Y4
	VMOVUPD Y4, INSIDE
	VMOVMSKPD Y4, DX // 0: all four take the fill
	VMOVUPD HALF, Y6
	VBLENDVPD Y4, Y1, Y6, Y1
	VBLENDVPD Y4, Y2, Y6, Y2
	VSUBPD Y6, Y1, Y1
	VSUBPD Y6, Y2, Y2
	VROUNDPD $1, Y1, Y7
	VROUNDPD $1, Y2, Y8
	VSUBPD Y7, Y1, Y1
	VSUBPD Y8, Y2, Y2
	VMOVUPD Y1, FRACX
	VMOVUPD Y2, FRACY
	// IDX: the padded offset of the tap at (-1, -1), (fy+1)·wp + fx+1.
	VCVTTPD2DQY Y7, X7
	VCVTTPD2DQY Y8, X8
	VPMULLD WP4, X8, X8
	VPADDD X7, X8, X8
	VPADDD BIAS4, X8, X8
	VMOVDQU X8, IDX
	// Consecutive lanes (R10 = 15) read their taps with plain loads from BX
	// instead of TAPS4's shuffles.
	VPSHUFD $0, X8, X5
	VPADDD affinelanes<>(SB), X5, X5
	VPCMPEQD X8, X5, X5
	VMOVMSKPS X5, R10
	VMOVD X8, BX
	// All four at dy = 0: the row at 0 alone; at dx = 0: the column.
	VCMPPD $0, Y3, Y2, Y5
	VMOVMSKPD Y5, R11
	VCMPPD $0, Y3, Y1, Y5
	VMOVMSKPD Y5, R12
	MOVQ src+16(FP), SI
	MOVQ DI, R8
	MOVQ fill+64(FP), R9
	MOVQ channels+56(FP), R13

channel:
	TESTQ DX, DX
	JZ    store
	VMOVDQU IDX, X9
	CMPQ R11, $15
	JEQ  rowonly
	CMPQ R12, $15
	JEQ  colonly
	MOVQ SI, R14
	CMPQ R10, $15
	JEQ  fullc
	ROW4(R14, Y0)
	ADDQ R15, R14
	ROW4(R14, Y1)
	ADDQ R15, R14
	ROW4(R14, Y2)
	ADDQ R15, R14
	ROW4(R14, Y3)
	CUBIC(Y0, Y1, Y2, Y3, FRACY, Y6, Y4, Y5)
	JMP  store

fullc:
	ROW4C(R14, Y0)
	ADDQ R15, R14
	ROW4C(R14, Y1)
	ADDQ R15, R14
	ROW4C(R14, Y2)
	ADDQ R15, R14
	ROW4C(R14, Y3)
	CUBIC(Y0, Y1, Y2, Y3, FRACY, Y6, Y4, Y5)
	JMP  store

rowonly:
	LEAQ (SI)(R15*1), R14
	CMPQ R10, $15
	JEQ  rowonlyc
	ROW4(R14, Y6)
	JMP  store

rowonlyc:
	ROW4C(R14, Y6)
	JMP  store

colonlyc:
	MOVQ SI, R14
	LOAD(4, R14, Y10)
	ADDQ R15, R14
	LOAD(4, R14, Y11)
	ADDQ R15, R14
	LOAD(4, R14, Y12)
	ADDQ R15, R14
	LOAD(4, R14, Y13)
	CUBIC(Y10, Y11, Y12, Y13, FRACY, Y6, Y4, Y5)
	JMP  store

colonly:
	CMPQ R10, $15
	JEQ  colonlyc
	MOVQ SI, R14
	GATHER(4, R14, Y10, X10)
	ADDQ R15, R14
	GATHER(4, R14, Y11, X11)
	ADDQ R15, R14
	GATHER(4, R14, Y12, X12)
	ADDQ R15, R14
	GATHER(4, R14, Y13, X13)
	CUBIC(Y10, Y11, Y12, Y13, FRACY, Y6, Y4, Y5)

store:
	// Outside lanes take the fill (where there are any).
	CMPQ DX, $15
	JEQ  pack
	VBROADCASTSD (R9), Y7
	VMOVUPD INSIDE, Y8
	VBLENDVPD Y8, Y6, Y7, Y6

pack:
	// truncLevel: truncate to int32, then the two unsigned saturating packs
	// clip to [0, 255] (a value in (-1, 0] truncates to 0; the values are
	// cubics of levels, far inside the int32 range).
	VCVTTPD2DQY Y6, X6
	VPACKUSDW X6, X6, X6
	VPACKUSWB X6, X6, X6
	VMOVD X6, (R8)
	ADDQ dstPlane+8(FP), R8
	MOVQ srcPlane+24(FP), AX
	LEAQ (SI)(AX*4), SI
	ADDQ $8, R9
	DECQ R13
	JNZ  channel
	ADDQ $4, DI
	SUBQ $4, CX
	JNZ  group
	VZEROUPPER
	RET

// func floatLevelsAVX2(dst *float32, src *uint8, n int)
//
// dst[i] = float32(src[i]) for i < n (a positive multiple of 8).
TEXT ·floatLevelsAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

float8:
	VPMOVZXBD (SI), Y0
	VCVTDQ2PS Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $8, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JGT  float8
	VZEROUPPER
	RET

DATA affine8xc<>+0(SB)/8, $0.5
DATA affine8xc<>+8(SB)/8, $1.5
DATA affine8xc<>+16(SB)/8, $2.5
DATA affine8xc<>+24(SB)/8, $3.5
DATA affine8xc<>+32(SB)/8, $4.5
DATA affine8xc<>+40(SB)/8, $5.5
DATA affine8xc<>+48(SB)/8, $6.5
DATA affine8xc<>+56(SB)/8, $7.5
GLOBL affine8xc<>(SB), RODATA|NOPTR, $64

DATA affine8lanes<>+0(SB)/4, $0
DATA affine8lanes<>+4(SB)/4, $1
DATA affine8lanes<>+8(SB)/4, $2
DATA affine8lanes<>+12(SB)/4, $3
DATA affine8lanes<>+16(SB)/4, $4
DATA affine8lanes<>+20(SB)/4, $5
DATA affine8lanes<>+24(SB)/4, $6
DATA affine8lanes<>+28(SB)/4, $7
GLOBL affine8lanes<>(SB), RODATA|NOPTR, $32

DATA affine8step<>+0(SB)/8, $8.0
GLOBL affine8step<>(SB), RODATA|NOPTR, $8

// The group's taps offsets, for TAPS8's loads.
#define IDX8 0(SP)
#define IDX8L(l) (4*l)(SP)

// TAPS8 loads the four consecutive float32 taps past each of the eight
// IDX8 lanes of the row at ptr and transposes them: Z10…Z13 hold the
// taps at 0, 4, 8 and 12 bytes past the lanes, widened to float64. Lanes
// 0–3 go to the low 128 bits of each half-transposed register, lanes 4–7
// to the high 128. AX and Y4…Y7 are clobbered.
#define TAPS8(ptr) \
	MOVLQSX IDX8L(0), AX; \
	VMOVUPS (ptr)(AX*4), X10; \
	MOVLQSX IDX8L(4), AX; \
	VINSERTF128 $1, (ptr)(AX*4), Y10, Y10; \
	MOVLQSX IDX8L(1), AX; \
	VMOVUPS (ptr)(AX*4), X11; \
	MOVLQSX IDX8L(5), AX; \
	VINSERTF128 $1, (ptr)(AX*4), Y11, Y11; \
	MOVLQSX IDX8L(2), AX; \
	VMOVUPS (ptr)(AX*4), X12; \
	MOVLQSX IDX8L(6), AX; \
	VINSERTF128 $1, (ptr)(AX*4), Y12, Y12; \
	MOVLQSX IDX8L(3), AX; \
	VMOVUPS (ptr)(AX*4), X13; \
	MOVLQSX IDX8L(7), AX; \
	VINSERTF128 $1, (ptr)(AX*4), Y13, Y13; \
	VUNPCKLPS Y11, Y10, Y4; \
	VUNPCKHPS Y11, Y10, Y5; \
	VUNPCKLPS Y13, Y12, Y6; \
	VUNPCKHPS Y13, Y12, Y7; \
	VUNPCKLPD Y6, Y4, Y10; \
	VUNPCKHPD Y6, Y4, Y11; \
	VUNPCKLPD Y7, Y5, Y12; \
	VUNPCKHPD Y7, Y5, Y13; \
	VCVTPS2PD Y10, Z10; \
	VCVTPS2PD Y11, Z11; \
	VCVTPS2PD Y12, Z12; \
	VCVTPS2PD Y13, Z13

// ROW8 sets o to the cubic along the row at ptr (taps at 0, 4, 8 and 12
// bytes past the IDX8 lanes) at the fractions Z30.
#define ROW8(ptr, o) \
	TAPS8(ptr); \
	CUBIC(Z10, Z11, Z12, Z13, Z30, o, Z4, Z5)

// LOAD8 loads the eight float32 taps at off(ptr) + BX·4 + 0, 4, …, 28
// (the IDX8 lanes when they are consecutive), widened to float64.
#define LOAD8(off, ptr, dst) \
	VCVTPS2PD off(ptr)(BX*4), dst

// ROW8C is ROW8 with consecutive IDX8 lanes.
#define ROW8C(ptr, o) \
	LOAD8(0, ptr, Z10); \
	LOAD8(4, ptr, Z11); \
	LOAD8(8, ptr, Z12); \
	LOAD8(12, ptr, Z13); \
	CUBIC(Z10, Z11, Z12, Z13, Z30, o, Z4, Z5)

// GATHER8 loads the eight float32 taps at off(ptr) + the IDX8 lanes (Y9),
// widened to float64, into dst. Y15 is clobbered.
#define GATHER8(off, ptr, dst, dsty) \
	VPCMPEQD Y15, Y15, Y15; \
	VGATHERDPS Y15, off(ptr)(Y9*4), dsty; \
	VCVTPS2PD dsty, dst

// func affineBicubicAVX512(dst *uint8, dstPlane int, src *float32, srcPlane, wp int, k *[8]float64, n, channels int, fill *float64)
//
// affineBicubicAVX2 eight pixels at a time (n a positive multiple of 8),
// in 512-bit registers: the same operations in the same order, each
// pixel's values those of affinePixels. The row's constants stay in
// Z16…Z29, the group's fractions in Z30 (x) and Z31 (y), its inside
// lanes in K1.
TEXT ·affineBicubicAVX512(SB), 0, $32-72
	MOVQ k+40(FP), AX
	VBROADCASTSD 0(AX), Z16
	VBROADCASTSD 8(AX), Z17
	VBROADCASTSD 16(AX), Z18
	VBROADCASTSD 24(AX), Z19
	VBROADCASTSD 32(AX), Z20
	VBROADCASTSD 40(AX), Z21
	VBROADCASTSD 48(AX), Z22
	VBROADCASTSD 56(AX), Z23
	VBROADCASTSD affineconst<>+0(SB), Z24
	VMOVUPD affine8xc<>(SB), Z25
	VBROADCASTSD affine8step<>(SB), Z26
	VPXORQ Z27, Z27, Z27
	MOVQ wp+32(FP), R15
	MOVQ R15, AX
	VPBROADCASTD AX, Y28
	INCQ AX
	VPBROADCASTD AX, Y29
	SHLQ $2, R15 // a padded row in bytes
	MOVQ dst+0(FP), DI
	MOVQ n+48(FP), CX

group8:
	// The positions: u = m0·x' + m1·y' + m2, v = m3·x' + m4·y' + m5.
	VMULPD Z16, Z25, Z1
	VADDPD Z17, Z1, Z1
	VADDPD Z18, Z1, Z1
	VMULPD Z19, Z25, Z2
	VADDPD Z20, Z2, Z2
	VADDPD Z21, Z2, Z2
	VADDPD Z26, Z25, Z25
	// Inside: 0 <= u < w and 0 <= v < h; outside lanes sample (0, 0).
	VCMPPD $0x1D, Z27, Z1, K1
	VCMPPD $0x11, Z22, Z1, K2
	KANDW K2, K1, K1
	VCMPPD $0x1D, Z27, Z2, K2
	KANDW K2, K1, K1
	VCMPPD $0x11, Z23, Z2, K2
	KANDW K2, K1, K1
	KMOVW K1, DX // 0: all eight take the fill
	VBLENDMPD Z1, Z24, K1, Z1
	VBLENDMPD Z2, Z24, K1, Z2
	VSUBPD Z24, Z1, Z1
	VSUBPD Z24, Z2, Z2
	VRNDSCALEPD $1, Z1, Z7
	VRNDSCALEPD $1, Z2, Z8
	VSUBPD Z7, Z1, Z30
	VSUBPD Z8, Z2, Z31
	// IDX8: the padded offset of the tap at (-1, -1), (fy+1)·wp + fx+1.
	VCVTTPD2DQ Z7, Y7
	VCVTTPD2DQ Z8, Y8
	VPMULLD Y28, Y8, Y8
	VPADDD Y7, Y8, Y8
	VPADDD Y29, Y8, Y8
	VMOVDQU Y8, IDX8
	VMOVDQU Y8, Y9
	// Consecutive lanes (R10 = 0xFF) read their taps with plain loads from
	// BX instead of TAPS8's shuffles.
	VPBROADCASTD X8, Y5
	VPADDD affine8lanes<>(SB), Y5, Y5
	VPCMPEQD Y8, Y5, Y5
	VMOVMSKPS Y5, R10
	VMOVD X8, BX
	// All eight at dy = 0: the row at 0 alone; at dx = 0: the column.
	VCMPPD $0, Z27, Z31, K2
	KMOVW K2, R11
	VCMPPD $0, Z27, Z30, K2
	KMOVW K2, R12
	MOVQ src+16(FP), SI
	MOVQ DI, R8
	MOVQ fill+64(FP), R9
	MOVQ channels+56(FP), R13

channel8:
	TESTQ DX, DX
	JZ    store8
	CMPQ R11, $0xFF
	JEQ  rowonly8
	CMPQ R12, $0xFF
	JEQ  colonly8
	MOVQ SI, R14
	CMPQ R10, $0xFF
	JEQ  full8c
	ROW8(R14, Z0)
	ADDQ R15, R14
	ROW8(R14, Z1)
	ADDQ R15, R14
	ROW8(R14, Z2)
	ADDQ R15, R14
	ROW8(R14, Z3)
	CUBIC(Z0, Z1, Z2, Z3, Z31, Z6, Z4, Z5)
	JMP  store8

full8c:
	ROW8C(R14, Z0)
	ADDQ R15, R14
	ROW8C(R14, Z1)
	ADDQ R15, R14
	ROW8C(R14, Z2)
	ADDQ R15, R14
	ROW8C(R14, Z3)
	CUBIC(Z0, Z1, Z2, Z3, Z31, Z6, Z4, Z5)
	JMP  store8

rowonly8:
	LEAQ (SI)(R15*1), R14
	CMPQ R10, $0xFF
	JEQ  rowonly8c
	ROW8(R14, Z6)
	JMP  store8

rowonly8c:
	ROW8C(R14, Z6)
	JMP  store8

colonly8c:
	MOVQ SI, R14
	LOAD8(4, R14, Z10)
	ADDQ R15, R14
	LOAD8(4, R14, Z11)
	ADDQ R15, R14
	LOAD8(4, R14, Z12)
	ADDQ R15, R14
	LOAD8(4, R14, Z13)
	CUBIC(Z10, Z11, Z12, Z13, Z31, Z6, Z4, Z5)
	JMP  store8

colonly8:
	CMPQ R10, $0xFF
	JEQ  colonly8c
	MOVQ SI, R14
	GATHER8(4, R14, Z10, Y10)
	ADDQ R15, R14
	GATHER8(4, R14, Z11, Y11)
	ADDQ R15, R14
	GATHER8(4, R14, Z12, Y12)
	ADDQ R15, R14
	GATHER8(4, R14, Z13, Y13)
	CUBIC(Z10, Z11, Z12, Z13, Z31, Z6, Z4, Z5)

store8:
	// Outside lanes take the fill (where there are any).
	CMPQ DX, $0xFF
	JEQ  pack8
	VBROADCASTSD (R9), Z7
	VBLENDMPD Z6, Z7, K1, Z6

pack8:
	// truncLevel, as the four-pixel kernel's pack does.
	VCVTTPD2DQ Z6, Y6
	VEXTRACTI128 $1, Y6, X7
	VPACKUSDW X7, X6, X6
	VPACKUSWB X6, X6, X6
	VMOVQ X6, (R8)
	ADDQ dstPlane+8(FP), R8
	MOVQ srcPlane+24(FP), AX
	LEAQ (SI)(AX*4), SI
	ADDQ $8, R9
	DECQ R13
	JNZ  channel8
	ADDQ $8, DI
	SUBQ $8, CX
	JNZ  group8
	VZEROUPPER
	RET
