package npy

import (
	"fmt"
	"strconv"
	"strings"
)

// header is the dictionary of a .npy file.
type header struct {
	descr   string
	fortran bool
	shape   []int
}

// maxRank bounds the number of dimensions, as NumPy does (NPY_MAXDIMS).
const maxRank = 64

// parseHeader parses the dictionary literal of a .npy header that starts at
// byte offset base of its file, strictly: the keys 'descr', 'fortran_order'
// and 'shape' exactly once each, then only padding.
func parseHeader(s string, base int) (*header, error) {
	p := &dictParser{s: s, base: base}
	h := &header{}
	seen := map[string]bool{}
	if err := p.expect('{'); err != nil {
		return nil, err
	}
	for p.peek() != '}' {
		at := p.pos
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, p.errorAt(at, "key %q appears twice", key)
		}
		seen[key] = true
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		switch key {
		case "descr":
			at := p.pos
			if h.descr, err = p.str(); err != nil {
				return nil, err
			}
			if _, ok := itemSize(h.descr); !ok {
				return nil, p.errorAt(at, "field 'descr' is %q, want '<f2', '<f4' or '<f8'", h.descr)
			}
		case "fortran_order":
			at := p.pos
			switch w := p.word(); w {
			case "False":
			case "True":
				h.fortran = true
			default:
				return nil, p.errorAt(at, "field 'fortran_order' is %q, want True or False", w)
			}
		case "shape":
			if h.shape, err = p.tuple(); err != nil {
				return nil, err
			}
		default:
			return nil, p.errorAt(at, "unknown key %q (want 'descr', 'fortran_order' and 'shape')", key)
		}
		if p.peek() == ',' {
			p.pos++
		} else if p.peek() != '}' {
			return nil, p.errorf("expected ',' or '}' after the value of %q, found %s", key, p.next())
		}
	}
	p.pos++
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return nil, p.errorf("key '%s' is missing", k)
		}
	}
	if rest := strings.TrimRight(p.s[p.pos:], " \t\r\n\x00"); len(rest) != 0 {
		return nil, p.errorf("unexpected %q after the dictionary", clip(p.s[p.pos:]))
	}
	return h, nil
}

// itemSize is the byte size of one element of an accepted dtype.
func itemSize(descr string) (int, bool) {
	switch descr {
	case "<f2":
		return 2, true
	case "<f4":
		return 4, true
	case "<f8":
		return 8, true
	}
	return 0, false
}

// dictParser reads a Python literal; errors give the byte offset in the file.
type dictParser struct {
	s    string
	pos  int
	base int
}

func (p *dictParser) errorf(format string, args ...any) error {
	return p.errorAt(p.pos, format, args...)
}

func (p *dictParser) errorAt(pos int, format string, args ...any) error {
	return fmt.Errorf("header at byte %d: %s", p.base+pos, fmt.Sprintf(format, args...))
}

// peek skips white space and returns the next byte, or 0 at the end.
func (p *dictParser) peek() byte {
	for p.pos < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.pos]) >= 0 {
		p.pos++
	}
	if p.pos >= len(p.s) {
		return 0
	}
	return p.s[p.pos]
}

// next describes the next byte for an error message.
func (p *dictParser) next() string {
	if p.peek() == 0 {
		return "the end of the header"
	}
	return strconv.QuoteRune(rune(p.s[p.pos]))
}

func (p *dictParser) expect(c byte) error {
	if p.peek() != c {
		return p.errorf("expected %q, found %s", c, p.next())
	}
	p.pos++
	return nil
}

// str reads a quoted string without escapes.
func (p *dictParser) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", p.errorf("expected a quoted string, found %s", p.next())
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

// word reads a run of letters, digits and underscores.
func (p *dictParser) word() string {
	p.peek()
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			break
		}
		p.pos++
	}
	return p.s[start:p.pos]
}

// tuple reads a tuple of non-negative integers as Python writes it: (),
// (5,), (2, 3) or (2, 3,).
func (p *dictParser) tuple() ([]int, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	dims := []int{}
	comma := false // whether the last element was followed by a comma
	for {
		if p.peek() == ')' {
			if len(dims) == 1 && !comma {
				return nil, p.errorf("field 'shape': (%d) is not a tuple; a 1-tuple is written (%d,)", dims[0], dims[0])
			}
			p.pos++
			return dims, nil
		}
		if len(dims) == maxRank {
			return nil, p.errorf("field 'shape' has more than %d dimensions", maxRank)
		}
		at := p.pos
		w := p.word()
		d, err := strconv.ParseInt(w, 10, 64)
		if err != nil || d < 0 {
			return nil, p.errorAt(at, "field 'shape': %q is not a non-negative integer", clip(w))
		}
		dims = append(dims, int(d))
		comma = p.peek() == ','
		if comma {
			p.pos++
		} else if p.peek() != ')' {
			return nil, p.errorf("field 'shape': expected ',' or ')', found %s", p.next())
		}
	}
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}
