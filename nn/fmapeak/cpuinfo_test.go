package fmapeak

import (
	"runtime"
	"strings"
	"testing"
)

const zen4 = `processor	: 0
vendor_id	: AuthenticAMD
cpu family	: 25
model		: 17
model name	: AMD EPYC 9R14 96-Core Processor
stepping	: 1
flags		: fpu avx512f avx512_bf16

processor	: 1
vendor_id	: AuthenticAMD
cpu family	: 26
model		: 2
model name	: other
`

func TestParseCPUInfo(t *testing.T) {
	for _, c := range []struct {
		text, want string
	}{
		{zen4, "AMD EPYC 9R14 96-Core Processor (family 25 model 17)"},
		{"model name\t: Intel(R) Xeon(R) Platinum 8488C\nmodel\t\t: 143\ncpu family\t: 6\n", "Intel(R) Xeon(R) Platinum 8488C (family 6 model 143)"},
		{"processor\t: 0\nBogoMIPS\t: 243.75\nCPU implementer\t: 0x41\n\nProcessor\t: ARMv8\n", "ARMv8"},
		{"processor\t: 0\nBogoMIPS\t: 243.75\n", ""},
		{"processor : 0\nuarch : sifive,u74-mc\n", "sifive,u74-mc"},
	} {
		p, err := ParseCPUInfo(strings.NewReader(c.text))
		if c.want == "" {
			if err == nil {
				t.Errorf("%q: parsed as %v, want an error", c.text, p)
			}
			continue
		}
		if err != nil || p.String() != c.want {
			t.Errorf("%q: %v, %v; want %s", c.text, p, err, c.want)
		}
	}
	if _, err := ParseCPUInfo(strings.NewReader("model name : x\nmodel : 1a\n")); err == nil || !strings.Contains(err.Error(), `line 2: model "1a"`) {
		t.Errorf("malformed model number: error %v", err)
	}
}

func TestReadProcessor(t *testing.T) {
	p, err := ReadProcessor()
	if runtime.GOOS != "linux" {
		if err == nil {
			t.Errorf("ReadProcessor on %s = %v, want an error", runtime.GOOS, p)
		}
		return
	}
	if err != nil || p.Name == "" {
		t.Fatalf("ReadProcessor = %v, %v", p, err)
	}
	t.Logf("processor: %v", p)
}

func FuzzParseCPUInfo(f *testing.F) {
	f.Add(zen4)
	f.Add("model name : x\n\nmodel : 3\n")
	f.Add("cpu family : -1\n")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParseCPUInfo(strings.NewReader(text))
		if err != nil {
			return
		}
		if p.Name == "" && p.Family < 0 && p.Model < 0 {
			t.Fatalf("%q: no field found, but no error", text)
		}
		if p.Family < -1 || p.Model < -1 || strings.ContainsAny(p.Name, "\n") {
			t.Fatalf("%q: parsed as %+v", text, p)
		}
		if s := p.String(); s == "" {
			t.Fatalf("%q: empty String", text)
		}
	})
}
