package amx

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/internal/objdump"
)

// TestTable checks encodings assembled by clang-14 and decoded by GNU
// objdump on an AMX processor (see shared/amx/README.md's table).
func TestTable(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want []byte
	}{
		{"LDTILECFG (DI)", Ldtilecfg("DI"), []byte{0xc4, 0xe2, 0x78, 0x49, 0x07}},
		{"STTILECFG (DI)", Sttilecfg("DI"), []byte{0xc4, 0xe2, 0x79, 0x49, 0x07}},
		{"TILERELEASE", Tilerelease(), []byte{0xc4, 0xe2, 0x78, 0x49, 0xc0}},
		{"TILELOADD tmm1, [CX+DX]", Tileloadd(1, "CX", "DX"), []byte{0xc4, 0xe2, 0x7b, 0x4b, 0x0c, 0x11}},
		{"TILESTORED [CX+DX], tmm1", Tilestored("CX", "DX", 1), []byte{0xc4, 0xe2, 0x7a, 0x4b, 0x0c, 0x11}},
		{"TILEZERO tmm0", Tilezero(0), []byte{0xc4, 0xe2, 0x7b, 0x49, 0xc0}},
		{"TDPBF16PS tmm6, tmm5, tmm4", Tdpbf16ps(6, 5, 4), []byte{0xc4, 0xe2, 0x5a, 0x5c, 0xf5}},
		{"TILELOADD tmm0, [BP+R8]", Tileloadd(0, "BP", "R8"), []byte{0xc4, 0xa2, 0x7b, 0x4b, 0x44, 0x05, 0x00}},
		{"PREFETCHW [R11]", Prefetchw("R11", 0), []byte{0x41, 0x0f, 0x0d, 0x0b}},
		{"PREFETCHW [R11+64]", Prefetchw("R11", 64), []byte{0x41, 0x0f, 0x0d, 0x4b, 0x40}},
		{"PREFETCHW [SP-8]", Prefetchw("SP", -8), []byte{0x0f, 0x0d, 0x4c, 0x24, 0xf8}},
	} {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("%s = % x, want % x", c.name, c.got, c.want)
		}
	}
	want := "BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0 // TILERELEASE"
	if got := Asm(Tilerelease(), "TILERELEASE"); got != want {
		t.Errorf("Asm = %q, want %q", got, want)
	}
}

// TestObjdump decodes every tile operation, and PREFETCHW, on every
// register and addressing case with GNU objdump and checks what it reads
// back.
func TestObjdump(t *testing.T) {
	att := map[string]string{"AX": "rax", "CX": "rcx", "DX": "rdx", "BX": "rbx", "SP": "rsp", "BP": "rbp", "SI": "rsi", "DI": "rdi"}
	reg := func(name string) string {
		if r, ok := att[name]; ok {
			return "%" + r
		}
		return "%" + strings.ToLower(name)
	}
	// A SIB byte with no index reads as %riz, except under SP and R12.
	addr := func(base, index string) string {
		disp := ""
		if base == "BP" || base == "R13" {
			disp = "0x0"
		}
		if index == "" && (base == "SP" || base == "R12") {
			return fmt.Sprintf("%s(%s)", disp, reg(base))
		}
		if index == "" {
			index = "RIZ"
		}
		return fmt.Sprintf("%s(%s,%s,1)", disp, reg(base), reg(index))
	}
	var code bytes.Buffer
	var want []string
	add := func(c []byte, w string) { code.Write(c); want = append(want, w) }
	for _, b := range gprNames {
		cfgAddr := addr(b, "")
		if b != "SP" && b != "R12" {
			cfgAddr = strings.Replace(cfgAddr, ",%riz,1", "", 1)
		}
		add(Ldtilecfg(b), "ldtilecfg "+cfgAddr)
		add(Sttilecfg(b), "sttilecfg "+cfgAddr)
		for i, x := range append([]string{""}, gprNames...) {
			if x == "SP" {
				continue
			}
			tm := i % 8
			add(Tileloadd(tm, b, x), fmt.Sprintf("tileloadd %s,%%tmm%d", addr(b, x), tm))
			add(Tilestored(b, x, 7-tm), fmt.Sprintf("tilestored %%tmm%d,%s", 7-tm, addr(b, x)))
		}
	}
	for d := range 8 {
		add(Tilezero(d), fmt.Sprintf("tilezero %%tmm%d", d))
		for a := range 8 {
			for b := range 8 {
				if d == a || d == b || a == b {
					continue
				}
				add(Tdpbf16ps(d, a, b), fmt.Sprintf("tdpbf16ps %%tmm%d,%%tmm%d,%%tmm%d", b, a, d))
			}
		}
	}
	add(Tilerelease(), "tilerelease")
	for _, b := range gprNames {
		for _, disp := range []int8{0, 64, -128} {
			at := "(" + reg(b) + ")"
			switch {
			case disp < 0:
				at = fmt.Sprintf("-%#x%s", -int(disp), at)
			case disp > 0 || b == "BP" || b == "R13":
				at = fmt.Sprintf("%#x%s", disp, at)
			}
			add(Prefetchw(b, disp), "prefetchw "+at)
		}
	}

	objdump.Check(t, "AMX", code.Bytes(), want)
}

func TestRejectsBadOperands(t *testing.T) {
	for name, f := range map[string]func(){
		"tmm8":         func() { Tilezero(8) },
		"SP as index":  func() { Tileloadd(0, "AX", "SP") },
		"EAX":          func() { Ldtilecfg("EAX") },
		"tmm-1":        func() { Tdpbf16ps(0, -1, 2) },
		"a tile twice": func() { Tdpbf16ps(0, 1, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s was encoded", name)
				}
			}()
			f()
		}()
	}
}
