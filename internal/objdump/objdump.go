// Package objdump checks machine code that the assembly generators write
// as bytes against GNU objdump's decoding of it, for the tests of the
// encoders (internal/evex, internal/amx).
package objdump

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Check decodes code with objdump (binutils) as x86-64 and compares each
// instruction, in AT&T syntax with single spaces, with want; name labels
// the failures. Without objdump the test is skipped, the encodings then
// checked against the encoders' own tables alone.
func Check(t testing.TB, name string, code []byte, want []string) {
	t.Helper()
	bin, err := exec.LookPath("objdump")
	if err != nil {
		t.Skip("objdump (binutils) not installed: the encodings are checked against the table only")
	}
	path := filepath.Join(t.TempDir(), "code.bin")
	if err := os.WriteFile(path, code, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-D", "-b", "binary", "-mi386:x86-64", path).CombinedOutput()
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
		t.Fatalf("%s: objdump decoded %d instructions, want %d:\n%s", name, len(got), len(want), out[:min(len(out), 2000)])
	}
	bad := 0
	for i := range want {
		if got[i] != want[i] && bad < 10 {
			bad++
			t.Errorf("%s: instruction %d decodes as %q, want %q", name, i, got[i], want[i])
		}
	}
}
