package fmapeak

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Processor names the CPU: its model name and, on x86, its family and
// model numbers (-1 where unknown), from Linux's /proc/cpuinfo.
type Processor struct {
	Name   string `json:"name"`
	Family int    `json:"family"`
	Model  int    `json:"model"`
}

// String is "name (family F model M)", the numbers where known.
func (p Processor) String() string {
	name := p.Name
	if name == "" {
		name = "unknown processor"
	}
	if p.Family < 0 || p.Model < 0 {
		return name
	}
	return fmt.Sprintf("%s (family %d model %d)", name, p.Family, p.Model)
}

// ReadProcessor reads /proc/cpuinfo; elsewhere than on Linux it returns
// an error.
func ReadProcessor() (Processor, error) {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return Processor{Family: -1, Model: -1}, err
	}
	defer f.Close()
	p, err := ParseCPUInfo(f)
	if err != nil {
		return p, fmt.Errorf("/proc/cpuinfo: %w", err)
	}
	return p, nil
}

// ParseCPUInfo reads the first processor's "model name", "cpu family"
// and "model" from text in /proc/cpuinfo's format ("key<tabs>: value"
// lines, a blank line between processors). On other architectures the
// name may come from "Processor", "cpu model" or "uarch" and the numbers
// be absent (-1). It fails where no name or number is found, or a number
// is malformed.
func ParseCPUInfo(r io.Reader) (Processor, error) {
	p := Processor{Family: -1, Model: -1}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			if p.Name != "" || p.Family >= 0 || p.Model >= 0 {
				break // the end of the first processor's block
			}
			continue
		}
		key, value, ok := strings.Cut(text, ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch key {
		case "model name", "Processor", "cpu model", "uarch":
			if p.Name == "" {
				p.Name = value
			}
		case "cpu family", "model":
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 {
				return p, fmt.Errorf("line %d: %s %q is not a number", line, key, value)
			}
			if key == "model" {
				p.Model = n
			} else {
				p.Family = n
			}
		}
	}
	if err := sc.Err(); err != nil {
		return p, err
	}
	if p.Name == "" && p.Family < 0 && p.Model < 0 {
		return p, fmt.Errorf("no processor's model name, family or model")
	}
	return p, nil
}
