// Package amx encodes the Intel AMX instructions (AMX-TILE, AMX-BF16) that
// Go's assembler has no mnemonic for, as BYTE directives the assembly
// generators emit, and PREFETCHW, which it lacks too and which the AMX
// kernel issues for the rows of C it is about to store.
//
// Every AMX instruction is VEX-encoded with the three-byte prefix, opcode
// map 0F38, W = 0 and L = 0 (Intel SDM Vol. 2A, 2.3.5 and 3.1 "AMX"):
//
//	C4 P0 P1 opcode ModRM [SIB] [disp8]
//
//	P0 = R̄ X̄ B̄ 0 0 0 1 0     R̄: bit 3 of ModRM.reg, inverted (always 1:
//	                         tiles are tmm0-7); X̄, B̄: bit 3 of the index
//	                         and of the base register, inverted
//	P1 = W v̄ v̄ v̄ v̄ L p p     W = 0; vvvv: the third tile of TDPBF16PS,
//	                         inverted (1111 when unused); L = 0; pp: the
//	                         implied prefix (0: none, 1: 66, 2: F3, 3: F2)
//
// The tile loads and stores address memory through a SIB byte whose index
// register is the row stride in bytes: TILELOADD tmm, [base + index·1]
// reads row r of the tile at base + r·index. Operands are in Intel's
// order: destination first.
package amx

import (
	"fmt"
	"slices"
	"strings"
)

// gprNames are the general-purpose registers as Go's assembler names
// them, by their encoding number.
var gprNames = []string{"AX", "CX", "DX", "BX", "SP", "BP", "SI", "DI", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15"}

// gpr returns the encoding number of a general-purpose register.
func gpr(op, name string) int {
	n := slices.Index(gprNames, name)
	if n < 0 {
		panic(fmt.Sprintf("amx: %s: no general-purpose register %q", op, name))
	}
	return n
}

// tile checks a tile register number.
func tile(op string, t int) {
	if t < 0 || t > 7 {
		panic(fmt.Sprintf("amx: %s: no tile register tmm%d", op, t))
	}
}

// vex returns the three-byte VEX prefix and opcode for map 0F38, W0, L0,
// with the given prefix bits, register extension bits (index, base: their
// encoding numbers, bit 3 used) and vvvv register (-1 for none).
func vex(pp byte, index, base, vvvv int, opcode byte) []byte {
	inv := func(r int) byte { return byte(^r>>3) & 1 }
	p0 := 1<<7 | inv(index)<<6 | inv(base)<<5 | 0x02
	v := byte(15)
	if vvvv >= 0 {
		v = byte(^vvvv & 15)
	}
	p1 := v<<3 | pp&3
	return []byte{0xc4, p0, p1, opcode}
}

// memOperand returns ModRM (with reg in bits 3-5) and what follows it for
// [base + index·1] (index "" for none): a SIB byte always, since the tile
// instructions require one, and a zero disp8 where the base is BP or R13.
func memOperand(op string, reg int, base, index string) (code []byte, b, x int) {
	b = gpr(op, base)
	x = 4 // SIB.index = 100: no index, a stride of zero
	if index != "" {
		if x = gpr(op, index); x == 4 {
			panic(fmt.Sprintf("amx: %s: SP cannot be an index", op))
		}
	}
	mod := byte(0)
	if b&7 == 5 {
		mod = 1
	}
	code = []byte{mod<<6 | byte(reg&7)<<3 | 4, byte(x&7)<<3 | byte(b&7)}
	if mod == 1 {
		code = append(code, 0)
	}
	return code, b, x
}

// Ldtilecfg is LDTILECFG m512 at [base]: loads the tile configuration.
func Ldtilecfg(base string) []byte { return cfg("LDTILECFG", 0, base) }

// Sttilecfg is STTILECFG m512 at [base]: stores the tile configuration.
func Sttilecfg(base string) []byte { return cfg("STTILECFG", 1, base) }

func cfg(op string, pp byte, base string) []byte {
	b := gpr(op, base)
	if b&7 == 4 {
		// SP and R12 as a base need a SIB byte.
		return append(vex(pp, 0, b, -1, 0x49), 0x04, 0x24)
	}
	mod := byte(0)
	if b&7 == 5 {
		mod = 1
	}
	code := append(vex(pp, 0, b, -1, 0x49), mod<<6|byte(b&7))
	if mod == 1 {
		code = append(code, 0)
	}
	return code
}

// Tilerelease is TILERELEASE: returns the tiles to their initial state.
func Tilerelease() []byte { return []byte{0xc4, 0xe2, 0x78, 0x49, 0xc0} }

// Tilezero is TILEZERO tmm(t).
func Tilezero(t int) []byte {
	tile("TILEZERO", t)
	return append(vex(3, 0, 0, -1, 0x49), 0xc0|byte(t)<<3)
}

// Tileloadd is TILELOADD tmm(t), [base + index·1]: row r of the tile
// from base + r·index.
func Tileloadd(t int, base, index string) []byte { return tileMem("TILELOADD", 3, t, base, index) }

// Tilestored is TILESTORED [base + index·1], tmm(t).
func Tilestored(base, index string, t int) []byte {
	return tileMem("TILESTORED", 2, t, base, index)
}

func tileMem(op string, pp byte, t int, base, index string) []byte {
	tile(op, t)
	m, b, x := memOperand(op, t, base, index)
	return append(vex(pp, x, b, -1, 0x4b), m...)
}

// Tdpbf16ps is TDPBF16PS tmm(dst), tmm(a), tmm(b): dst += a·b, a holding
// rows of bfloat16 pairs along K and b pairs of K steps by columns. The
// three tiles must differ (the processor raises #UD otherwise).
func Tdpbf16ps(dst, a, b int) []byte {
	for _, t := range []int{dst, a, b} {
		tile("TDPBF16PS", t)
	}
	if dst == a || dst == b || a == b {
		panic(fmt.Sprintf("amx: TDPBF16PS tmm%d, tmm%d, tmm%d: the tiles must differ", dst, a, b))
	}
	return append(vex(2, 0, 0, b, 0x5c), 0xc0|byte(dst)<<3|byte(a))
}

// Prefetchw is PREFETCHW [base + disp] (0F 0D /1): fetches the line into
// the cache in a state a store can write without asking for it again.
// It is a legacy instruction, not VEX: a REX prefix (41) extends the base
// register to R8-R15, SP and R12 as a base take a SIB byte, and BP and
// R13 always a displacement.
func Prefetchw(base string, disp int8) []byte {
	b := gpr("PREFETCHW", base)
	var code []byte
	if b >= 8 {
		code = append(code, 0x41)
	}
	mod := byte(0)
	if disp != 0 || b&7 == 5 {
		mod = 1
	}
	code = append(code, 0x0f, 0x0d, mod<<6|1<<3|byte(b&7))
	if b&7 == 4 {
		code = append(code, 0x24)
	}
	if mod == 1 {
		code = append(code, byte(disp))
	}
	return code
}

// Asm writes code as BYTE directives on one line, followed by comment.
func Asm(code []byte, comment string) string {
	var s strings.Builder
	for i, x := range code {
		if i > 0 {
			s.WriteString("; ")
		}
		fmt.Fprintf(&s, "BYTE $0x%02x", x)
	}
	return s.String() + " // " + comment
}
