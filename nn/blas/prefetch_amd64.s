//go:build amd64 && !openblas && !purego

#include "textflag.h"

// func prefetchRows(p *float32, stride, rows, width int)
//
// PREFETCHT1 every 64-byte line of rows rows of width bytes, stride bytes
// apart, from p.
TEXT ·prefetchRows(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), AX
	MOVQ stride+8(FP), BX
	MOVQ rows+16(FP), CX
	MOVQ width+24(FP), DX
	TESTQ CX, CX
	JLE done
	TESTQ DX, DX
	JLE done
row:
	XORQ SI, SI
line:
	PREFETCHT1 (AX)(SI*1)
	ADDQ $64, SI
	CMPQ SI, DX
	JLT line
	ADDQ BX, AX
	DECQ CX
	JNZ row
done:
	RET
