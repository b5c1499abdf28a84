package evex

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/internal/objdump"
)

// TestZmmTable checks encodings worked out by hand from the layout in the
// package documentation (and confirmed with llvm-mc -show-encoding). The
// first VDPBF16PS row in full: zmm24, zmm26, zmm25 are 11000, 11010 and
// 11001 in binary.
//
//	P0 = R̄=~1 X̄=~1 B̄=~1 R̄'=~1 0 mmm=010      = 0000 0010 = 0x02
//	P1 = W=0 vvvv=~1010 1 pp=10 (F3)          = 0010 1110 = 0x2e
//	P2 = z=0 L'L=10 b=0 V̄'=~1 aaa=000         = 0100 0000 = 0x40
//	ModRM = 11 reg=000 rm=001                 = 1100 0001 = 0xc1
func TestZmmTable(t *testing.T) {
	for _, c := range []struct {
		op              Op
		dst, src1, src2 int
		want            []byte
	}{
		{VDPBF16PS, 24, 26, 25, []byte{0x62, 0x02, 0x2e, 0x40, 0x52, 0xc1}},
		{VDPBF16PS, 0, 1, 2, []byte{0x62, 0xf2, 0x76, 0x48, 0x52, 0xc2}},
		{VDPBF16PS, 23, 17, 9, []byte{0x62, 0xc2, 0x76, 0x40, 0x52, 0xf9}},
		{VDPBF16PS, 7, 31, 16, []byte{0x62, 0xb2, 0x06, 0x40, 0x52, 0xf8}},
		{VFMADD231PH, 0, 1, 2, []byte{0x62, 0xf6, 0x75, 0x48, 0xb8, 0xc2}},
		{VFMADD231PH, 31, 16, 8, []byte{0x62, 0x46, 0x7d, 0x40, 0xb8, 0xf8}},
		{VFMADD231PH, 12, 5, 30, []byte{0x62, 0x16, 0x55, 0x48, 0xb8, 0xe6}},
		{VFMADD231PH, 1, 27, 3, []byte{0x62, 0xf6, 0x25, 0x40, 0xb8, 0xcb}},
		// P1 = W=0 vvvv=~0001 1 pp=11 (F2) = 0111 0111 = 0x77.
		{VCVTNE2PS2BF16, 0, 1, 2, []byte{0x62, 0xf2, 0x77, 0x48, 0x72, 0xc2}},
	} {
		if got := c.op.Zmm(c.dst, c.src1, c.src2); !bytes.Equal(got, c.want) {
			t.Errorf("%s zmm%d, zmm%d, zmm%d = % x, want % x", c.op.Name, c.dst, c.src1, c.src2, got, c.want)
		}
	}
}

func TestAsm(t *testing.T) {
	got := VDPBF16PS.Asm(24, 26, 25)
	want := "BYTE $0x62; BYTE $0x02; BYTE $0x2e; BYTE $0x40; BYTE $0x52; BYTE $0xc1 // VDPBF16PS Z25, Z26, Z24"
	if got != want {
		t.Errorf("Asm = %q, want %q", got, want)
	}
}

// TestObjdump decodes the encodings of every register combination with
// GNU objdump and checks the instruction and operands it reads back.
func TestObjdump(t *testing.T) {
	for _, op := range []Op{VDPBF16PS, VFMADD231PH, VCVTNE2PS2BF16} {
		var code bytes.Buffer
		var want []string
		for d := range 32 {
			for s1 := range 32 {
				for s2 := range 32 {
					code.Write(op.Zmm(d, s1, s2))
					want = append(want, fmt.Sprintf("%s %%zmm%d,%%zmm%d,%%zmm%d", strings.ToLower(op.Name), s2, s1, d))
				}
			}
		}
		objdump.Check(t, op.Name, code.Bytes(), want)
	}
}

func TestZmmRejectsBadRegisters(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("zmm32 was encoded")
		}
	}()
	VDPBF16PS.Zmm(32, 0, 0)
}

// TestZmmBcstTable checks broadcast forms against encodings decoded by
// GNU objdump, one per addressing case: a base alone, base and index, BP
// and R13 (a zero disp8), SP and R12 (a SIB byte), extended registers.
func TestZmmBcstTable(t *testing.T) {
	for _, c := range []struct {
		dst, src1 int
		m         Mem
		want      []byte
	}{
		{0, 12, Mem{Base: "AX", Index: "R9", Scale: 2}, []byte{0x62, 0xb2, 0x1e, 0x58, 0x52, 0x04, 0x48}},
		{29, 17, Mem{Base: "AX", Index: "R9", Scale: 2}, []byte{0x62, 0x22, 0x76, 0x50, 0x52, 0x2c, 0x48}},
		{0, 12, Mem{Base: "BP"}, []byte{0x62, 0xf2, 0x1e, 0x58, 0x52, 0x45, 0x00}},
		{0, 12, Mem{Base: "R13"}, []byte{0x62, 0xd2, 0x1e, 0x58, 0x52, 0x45, 0x00}},
		{0, 12, Mem{Base: "SP"}, []byte{0x62, 0xf2, 0x1e, 0x58, 0x52, 0x04, 0x24}},
		{29, 17, Mem{Base: "R12"}, []byte{0x62, 0x42, 0x76, 0x50, 0x52, 0x2c, 0x24}},
		{0, 12, Mem{Base: "R8", Index: "R11", Scale: 8}, []byte{0x62, 0x92, 0x1e, 0x58, 0x52, 0x04, 0xd8}},
		{29, 17, Mem{Base: "R13", Index: "AX", Scale: 1}, []byte{0x62, 0x42, 0x76, 0x50, 0x52, 0x6c, 0x05, 0x00}},
	} {
		if got := VDPBF16PS.ZmmBcst(c.dst, c.src1, c.m); !bytes.Equal(got, c.want) {
			t.Errorf("VDPBF16PS zmm%d, zmm%d, %v = % x, want % x", c.dst, c.src1, c.m, got, c.want)
		}
	}
	got := VDPBF16PS.AsmBcst(0, 12, Mem{Base: "AX", Index: "R9", Scale: 2})
	want := "BYTE $0x62; BYTE $0xb2; BYTE $0x1e; BYTE $0x58; BYTE $0x52; BYTE $0x04; BYTE $0x48 // VDPBF16PS.BCST (AX)(R9*2), Z12, Z0"
	if got != want {
		t.Errorf("AsmBcst = %q, want %q", got, want)
	}
}

// TestObjdumpBroadcast decodes the broadcast form for every base, alone
// and with every index and scale, and checks what objdump reads back.
func TestObjdumpBroadcast(t *testing.T) {
	att := map[string]string{"AX": "rax", "CX": "rcx", "DX": "rdx", "BX": "rbx", "SP": "rsp", "BP": "rbp", "SI": "rsi", "DI": "rdi"}
	reg := func(name string) string {
		if r, ok := att[name]; ok {
			return "%" + r
		}
		return "%" + strings.ToLower(name)
	}
	var mems []Mem
	for _, b := range gprNames {
		mems = append(mems, Mem{Base: b})
		for _, x := range gprNames {
			if x == "SP" {
				continue
			}
			for _, sc := range []int{1, 2, 4, 8} {
				mems = append(mems, Mem{Base: b, Index: x, Scale: sc})
			}
		}
	}
	// Each operand with its own registers: across the 976 operands every
	// destination and first source comes back about 30 times.
	var code bytes.Buffer
	var want []string
	for i, m := range mems {
		d, s1 := i%32, (7*i+i/32)%32
		code.Write(VDPBF16PS.ZmmBcst(d, s1, m))
		addr := reg(m.Base)
		if m.Index != "" {
			addr += fmt.Sprintf(",%s,%d", reg(m.Index), m.Scale)
		}
		disp := ""
		if m.Base == "BP" || m.Base == "R13" {
			disp = "0x0"
		}
		want = append(want, fmt.Sprintf("vdpbf16ps %s(%s){1to16},%%zmm%d,%%zmm%d", disp, addr, s1, d))
	}
	objdump.Check(t, "VDPBF16PS.BCST", code.Bytes(), want)
}

func TestZmmBcstRejectsBadOperands(t *testing.T) {
	for _, m := range []Mem{{Base: "AX", Index: "SP", Scale: 1}, {Base: "AX", Index: "R9", Scale: 3}, {Base: "EAX"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%v was encoded", m)
				}
			}()
			VDPBF16PS.ZmmBcst(0, 0, m)
		}()
	}
}
