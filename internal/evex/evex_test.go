package evex

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Skip("objdump (binutils) not installed: the encodings are checked against the table only")
	}
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
		path := filepath.Join(t.TempDir(), "code.bin")
		if err := os.WriteFile(path, code.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(objdump, "-D", "-b", "binary", "-mi386:x86-64", path).CombinedOutput()
		if err != nil {
			t.Fatalf("objdump: %v\n%s", err, out)
		}
		var got []string
		for _, line := range strings.Split(string(out), "\n") {
			// "   6:	62 f2 76 48 52 c2    	vdpbf16ps %zmm2,%zmm1,%zmm0"
			f := strings.Split(line, "\t")
			if len(f) == 3 && strings.HasSuffix(strings.TrimSpace(f[0]), ":") {
				got = append(got, strings.Join(strings.Fields(f[2]), " "))
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%s: objdump decoded %d instructions, want %d:\n%s", op.Name, len(got), len(want), out[:min(len(out), 2000)])
		}
		bad := 0
		for i := range want {
			if got[i] != want[i] && bad < 10 {
				bad++
				t.Errorf("%s: instruction %d decodes as %q, want %q", op.Name, i, got[i], want[i])
			}
		}
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
