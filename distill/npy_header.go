package distill

import (
	"fmt"
	"strconv"
	"strings"
)

// npyHeader is the dictionary at the head of a .npy file.
type npyHeader struct {
	descr   string // dtype: "<f4" or "<f8"
	fortran bool
	shape   []int
}

// itemSize is the byte size of one element of the dtypes ReadNPY accepts.
func itemSize(descr string) (int, bool) {
	switch descr {
	case "<f4":
		return 4, true
	case "<f8":
		return 8, true
	}
	return 0, false
}

// formatHeader writes the dictionary as NumPy does:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
func formatHeader(shape []int) string {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	tuple := "(" + strings.Join(dims, ", ") + ")"
	if len(shape) == 1 {
		tuple = "(" + dims[0] + ",)"
	}
	return "{'descr': '<f4', 'fortran_order': False, 'shape': " + tuple + ", }"
}

// headerParser reads the Python literal dictionary of a .npy header. Errors
// give the byte offset in the file (base + position in the header).
type headerParser struct {
	s    string
	pos  int
	base int
}

func (p *headerParser) errorf(format string, args ...any) error {
	return fmt.Errorf("header at byte %d: %s", p.base+p.pos, fmt.Sprintf(format, args...))
}

func (p *headerParser) skipSpace() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t' || p.s[p.pos] == '\n' || p.s[p.pos] == '\r') {
		p.pos++
	}
}

func (p *headerParser) expect(c byte) error {
	p.skipSpace()
	if p.pos >= len(p.s) {
		return p.errorf("expected %q, found the end of the header", c)
	}
	if p.s[p.pos] != c {
		return p.errorf("expected %q, found %q", c, p.s[p.pos])
	}
	p.pos++
	return nil
}

// peek returns the next non-space byte, or 0 at the end.
func (p *headerParser) peek() byte {
	p.skipSpace()
	if p.pos >= len(p.s) {
		return 0
	}
	return p.s[p.pos]
}

// str reads a quoted string without escapes.
func (p *headerParser) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", p.errorf("expected a quoted string, found %q", q)
	}
	end := strings.IndexByte(p.s[p.pos+1:], q)
	if end < 0 {
		return "", p.errorf("unterminated string")
	}
	v := p.s[p.pos+1 : p.pos+1+end]
	if strings.IndexByte(v, '\\') >= 0 {
		return "", p.errorf("escape sequences in %q are not supported", v)
	}
	p.pos += end + 2
	return v, nil
}

// word reads an identifier or a number.
func (p *headerParser) word() string {
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '+') {
			break
		}
		p.pos++
	}
	return p.s[start:p.pos]
}

// tuple reads a tuple of non-negative integers: (), (5,), (2, 3).
func (p *headerParser) tuple() ([]int, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	dims := []int{}
	for {
		if p.peek() == ')' {
			p.pos++
			return dims, nil
		}
		w := p.word()
		// Python 2 wrote long integers with an L suffix.
		digits := strings.TrimSuffix(w, "L")
		d, err := strconv.Atoi(digits)
		if err != nil || d < 0 || digits == "" || digits[0] == '+' || digits[0] == '-' {
			return nil, p.errorf("dimension %q is not a non-negative integer", w)
		}
		dims = append(dims, d)
		switch p.peek() {
		case ',':
			p.pos++
		case ')':
			if len(dims) == 1 {
				return nil, p.errorf("(%d) is not a tuple: a 1-D shape is written (%d,)", d, d)
			}
		default:
			return nil, p.errorf("expected ',' or ')' in the shape, found %q", p.peek())
		}
	}
}

// parseHeader parses the dictionary in s, which starts at byte base of the file.
func parseHeader(s string, base int) (npyHeader, error) {
	p := &headerParser{s: s, base: base}
	var h npyHeader
	seen := map[string]bool{}
	if err := p.expect('{'); err != nil {
		return h, err
	}
	for p.peek() != '}' {
		key, err := p.str()
		if err != nil {
			return h, err
		}
		if seen[key] {
			return h, p.errorf("field %q appears twice", key)
		}
		seen[key] = true
		if err := p.expect(':'); err != nil {
			return h, err
		}
		switch key {
		case "descr":
			if h.descr, err = p.str(); err != nil {
				return h, fmt.Errorf("field 'descr': %w", err)
			}
			if _, ok := itemSize(h.descr); !ok {
				return h, p.errorf("field 'descr': dtype %q is not '<f4' or '<f8'", h.descr)
			}
		case "fortran_order":
			switch w := p.word(); w {
			case "False":
			case "True":
				return h, p.errorf("field 'fortran_order': True (column-major data) is not supported")
			default:
				return h, p.errorf("field 'fortran_order': %q is not True or False", w)
			}
		case "shape":
			if h.shape, err = p.tuple(); err != nil {
				return h, fmt.Errorf("field 'shape': %w", err)
			}
		default:
			return h, p.errorf("unknown field %q", key)
		}
		if p.peek() == ',' {
			p.pos++
		} else if p.peek() != '}' {
			return h, p.errorf("expected ',' or '}' after field %q, found %q", key, p.peek())
		}
	}
	p.pos++
	if p.skipSpace(); p.pos != len(p.s) {
		return h, p.errorf("unexpected %q after the dictionary", p.s[p.pos:min(len(p.s), p.pos+16)])
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, p.errorf("field %q is missing", k)
		}
	}
	return h, nil
}
