//go:build amd64 && !purego

#include "textflag.h"

// FOLD sets lanes to the carry-less products of their quadwords by the
// multipliers in k (low by low, high by high), added to add.
#define FOLD(k, lanes, add) \
	VPCLMULQDQ $0x00, k, lanes, Z5; \
	VPCLMULQDQ $0x11, k, lanes, lanes; \
	VPTERNLOGD $0x96, add, Z5, lanes

// REDUCE adds to Z7 the products of lanes' quadwords by the multipliers
// at off(DX).
#define REDUCE(off, lanes) \
	VMOVDQU64 off(DX), Z4; \
	VPCLMULQDQ $0x00, Z4, lanes, Z5; \
	VPCLMULQDQ $0x11, Z4, lanes, Z6; \
	VPTERNLOGD $0x96, Z5, Z6, Z7

// func foldCRC32C(state uint32, p []byte, k *[40]uint64) uint32
//
// The CRC-32C register after p (a positive multiple of 256 bytes) from
// state (checksum_amd64.go): Z0…Z3 hold the sixteen 128-bit lanes of the
// current 256 bytes.
TEXT ·foldCRC32C(SB), NOSPLIT, $0-44
	MOVL state+0(FP), AX
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX
	MOVQ k+32(FP), DX
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VMOVD AX, X4
	VPXORQ Z4, Z0, Z0
	VMOVDQU64 0(DX), Z4
	ADDQ $256, SI
	SUBQ $256, CX
	JZ   reduce

block:
	FOLD(Z4, Z0, 0(SI))
	FOLD(Z4, Z1, 64(SI))
	FOLD(Z4, Z2, 128(SI))
	FOLD(Z4, Z3, 192(SI))
	ADDQ $256, SI
	SUBQ $256, CX
	JNZ  block

reduce:
	// Every lane moved onto lane 15, added up, then lane 15 itself.
	VPXORQ Z7, Z7, Z7
	REDUCE(64, Z0)
	REDUCE(128, Z1)
	REDUCE(192, Z2)
	REDUCE(256, Z3)
	VEXTRACTI64X4 $1, Z7, Y6
	VPXORQ Y6, Y7, Y7
	VEXTRACTI128 $1, Y7, X6
	VPXOR X6, X7, X7
	VEXTRACTI32X4 $3, Z3, X6
	VPXOR X6, X7, X7
	VMOVQ X7, R8
	VPEXTRQ $1, X7, R9
	XORL AX, AX
	CRC32Q R8, AX
	CRC32Q R9, AX
	VZEROUPPER
	MOVL AX, ret+40(FP)
	RET
