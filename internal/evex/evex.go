// Package evex encodes AVX-512 instructions that Go's assembler has no
// mnemonic for, as BYTE directives the assembly generators emit: the
// register-to-register forms, and the forms whose second source is a
// 32-bit word in memory broadcast to every lane (Mem).
//
// An EVEX-encoded instruction on registers is six bytes (Intel SDM
// Vol. 2A, 2.7 "Intel AVX-512 Encoding"):
//
//	62 P0 P1 P2 opcode ModRM
//
//	P0 = R̄ X̄ B̄ R̄' 0 m m m   R̄, R̄': bits 3 and 4 of ModRM.reg (the
//	                         destination), inverted; B̄, X̄: bits 3 and 4
//	                         of ModRM.rm (the second source), inverted;
//	                         mmm: the opcode map (2: 0F38, 5: MAP5, 6: MAP6)
//	P1 = W v̄ v̄ v̄ v̄ 1 p p   W; vvvv: bits 0-3 of the first source,
//	                         inverted; pp: the implied prefix (0: none,
//	                         1: 66, 2: F3, 3: F2)
//	P2 = z L' L b V̄' a a a   z = 0 (merging), L'L = 10 (512 bits), b = 0
//	                         (no broadcast or rounding), V̄': bit 4 of the
//	                         first source, inverted; aaa: the mask
//	                         register (0: none)
//	ModRM = 11 reg rm        reg: bits 0-2 of the destination, rm: bits
//	                         0-2 of the second source
//
// Operands are in Intel's order: destination (also the accumulator of
// the multiply-adds), first source, second source.
//
// With a broadcast memory operand (m32bcst), b = 1 and ModRM addresses
// memory (Vol. 2A, 2.1.5 and 2.7.5):
//
//	62 P0 P1 P2 opcode ModRM [SIB] [disp8]
//
//	P0: X̄ and B̄ are bit 3 of the index and of the base register, inverted
//	ModRM = mod reg rm       mod = 00, or 01 with a zero disp8 when the
//	                         base is BP or R13; rm = 100 (a SIB byte
//	                         follows) with an index or when the base is
//	                         SP or R12, the base's bits 0-2 otherwise
//	SIB = ss index base      ss: log2 of the scale; index 100 for none
package evex

import (
	"fmt"
	"slices"
	"strings"
)

// Op is an EVEX opcode of the form EVEX.512.pp.map.W opcode /r.
type Op struct {
	Name   string
	Map    byte // 2: 0F38, 5: MAP5, 6: MAP6
	PP     byte // 0: none, 1: 66, 2: F3, 3: F2
	W      byte
	Opcode byte
}

var (
	// VDPBF16PS zmm1, zmm2, zmm3 (AVX512_BF16): EVEX.512.F3.0F38.W0 52 /r.
	// Each float32 lane of zmm1 accumulates the dot product of the two
	// bfloat16 pairs in that lane of zmm2 and zmm3.
	VDPBF16PS = Op{Name: "VDPBF16PS", Map: 2, PP: 2, W: 0, Opcode: 0x52}
	// VFMADD231PH zmm1, zmm2, zmm3 (AVX512_FP16): EVEX.512.66.MAP6.W0 B8
	// /r. zmm1 += zmm2·zmm3 on 32 float16 lanes.
	VFMADD231PH = Op{Name: "VFMADD231PH", Map: 6, PP: 1, W: 0, Opcode: 0xB8}
	// VCVTNE2PS2BF16 zmm1, zmm2, zmm3 (AVX512_BF16): EVEX.512.F2.0F38.W0
	// 72 /r. The 16 float32 of zmm3 become the low 16 bfloat16 of zmm1 and
	// those of zmm2 the high 16, rounded to nearest even (denormals to
	// zero, NaNs quieted).
	VCVTNE2PS2BF16 = Op{Name: "VCVTNE2PS2BF16", Map: 2, PP: 3, W: 0, Opcode: 0x72}
)

// Zmm returns the encoding of op zmm(dst), zmm(src1), zmm(src2); each
// register number is 0-31.
func (op Op) Zmm(dst, src1, src2 int) []byte {
	for _, r := range []int{dst, src1, src2} {
		if r < 0 || r > 31 {
			panic(fmt.Sprintf("evex: %s: no register zmm%d", op.Name, r))
		}
	}
	inv := func(r, bit int) byte { return byte(^r>>bit) & 1 }
	p0 := inv(dst, 3)<<7 | inv(src2, 4)<<6 | inv(src2, 3)<<5 | inv(dst, 4)<<4 | op.Map&7
	p1 := (op.W&1)<<7 | byte(^src1&15)<<3 | 1<<2 | op.PP&3
	p2 := byte(2)<<5 | inv(src1, 4)<<3
	modrm := byte(3)<<6 | byte(dst&7)<<3 | byte(src2&7)
	return []byte{0x62, p0, p1, p2, op.Opcode, modrm}
}

// Asm returns a Go assembly line encoding op zmm(dst), zmm(src1),
// zmm(src2) as BYTE directives, with the instruction as a comment.
func (op Op) Asm(dst, src1, src2 int) string {
	return byteLine(op.Zmm(dst, src1, src2)) + fmt.Sprintf(" // %s Z%d, Z%d, Z%d", op.Name, src2, src1, dst)
}

// gprNames are the general-purpose registers as Go's assembler names
// them, by their encoding number.
var gprNames = []string{"AX", "CX", "DX", "BX", "SP", "BP", "SI", "DI", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15"}

// Mem is a memory operand Base + Index·Scale, its registers named as Go's
// assembler names them ("AX", "R9"); Index "" for none.
type Mem struct {
	Base, Index string
	Scale       int
}

// String writes m as Go's assembler does: (AX) or (AX)(R9*2).
func (m Mem) String() string {
	if m.Index == "" {
		return "(" + m.Base + ")"
	}
	return fmt.Sprintf("(%s)(%s*%d)", m.Base, m.Index, m.Scale)
}

// gpr returns the encoding number of a general-purpose register.
func gpr(op, name string) int {
	n := slices.Index(gprNames, name)
	if n < 0 {
		panic(fmt.Sprintf("evex: %s: no general-purpose register %q", op, name))
	}
	return n
}

// ZmmBcst returns the encoding of op zmm(dst), zmm(src1), m32bcst(m): the
// second source is the 32-bit word at m in every lane.
func (op Op) ZmmBcst(dst, src1 int, m Mem) []byte {
	for _, r := range []int{dst, src1} {
		if r < 0 || r > 31 {
			panic(fmt.Sprintf("evex: %s: no register zmm%d", op.Name, r))
		}
	}
	base := gpr(op.Name, m.Base)
	index, ss := 4, 0 // no index: SIB.index = 100, X̄ = 1
	if m.Index != "" {
		if index = gpr(op.Name, m.Index); index == 4 {
			panic(fmt.Sprintf("evex: %s: SP cannot be an index", op.Name))
		}
		if ss = slices.Index([]int{1, 2, 4, 8}, m.Scale); ss < 0 {
			panic(fmt.Sprintf("evex: %s: scale %d", op.Name, m.Scale))
		}
	}
	inv := func(r, bit int) byte { return byte(^r>>bit) & 1 }
	p0 := inv(dst, 3)<<7 | inv(index, 3)<<6 | inv(base, 3)<<5 | inv(dst, 4)<<4 | op.Map&7
	p1 := (op.W&1)<<7 | byte(^src1&15)<<3 | 1<<2 | op.PP&3
	p2 := byte(2)<<5 | 1<<4 | inv(src1, 4)<<3
	mod, rm := byte(0), byte(base&7)
	if base&7 == 5 {
		mod = 1 // BP and R13 have no form without a displacement
	}
	code := []byte{0x62, p0, p1, p2, op.Opcode}
	if m.Index != "" || base&7 == 4 {
		code = append(code, mod<<6|byte(dst&7)<<3|4, byte(ss)<<6|byte(index&7)<<3|byte(base&7))
	} else {
		code = append(code, mod<<6|byte(dst&7)<<3|rm)
	}
	if mod == 1 {
		code = append(code, 0)
	}
	return code
}

// AsmBcst returns a Go assembly line encoding op zmm(dst), zmm(src1),
// m32bcst(m) as BYTE directives, with the instruction as a comment.
func (op Op) AsmBcst(dst, src1 int, m Mem) string {
	return byteLine(op.ZmmBcst(dst, src1, m)) + fmt.Sprintf(" // %s.BCST %s, Z%d, Z%d", op.Name, m, src1, dst)
}

// byteLine writes code as BYTE directives on one line.
func byteLine(code []byte) string {
	var b strings.Builder
	for i, x := range code {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "BYTE $0x%02x", x)
	}
	return b.String()
}
