package onnx

import (
	"encoding/binary"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// message is an encoded protobuf message whose tensor payloads are kept
// by reference, so that encoding a model copies no weights: the bytes of
// the message are the parts in order, a payload part written
// little-endian when the message is written out.
type message struct {
	parts []part
	cur   []byte // bytes not yet closed into a part
	size  int64  // total encoded size, cur included
}

// part is a run of encoded bytes, or a payload of float32 or int64 values.
type part struct {
	b []byte
	f []float32
	i []int64
}

func (p part) size() int64 {
	return int64(len(p.b)) + 4*int64(len(p.f)) + 8*int64(len(p.i))
}

func (m *message) append(b ...byte) {
	m.cur = append(m.cur, b...)
	m.size += int64(len(b))
}

func (m *message) flush() {
	if len(m.cur) > 0 {
		m.parts = append(m.parts, part{b: m.cur})
		m.cur = nil
	}
}

func (m *message) tag(num protowire.Number, typ protowire.Type) {
	m.append(protowire.AppendTag(nil, num, typ)...)
}

// varint writes an int64, int32 or enum field (wire type 0).
func (m *message) varint(num protowire.Number, v int64) {
	m.tag(num, protowire.VarintType)
	m.append(protowire.AppendVarint(nil, uint64(v))...)
}

// float32 writes a float field (wire type 5).
func (m *message) float32(num protowire.Number, v float32) {
	m.tag(num, protowire.Fixed32Type)
	m.append(protowire.AppendFixed32(nil, math.Float32bits(v))...)
}

// string writes a string or bytes field; an empty s is left out (every
// string this package writes is an optional field whose absence means "").
func (m *message) string(num protowire.Number, s string) {
	if s == "" {
		return
	}
	m.tag(num, protowire.BytesType)
	m.append(protowire.AppendVarint(nil, uint64(len(s)))...)
	m.append([]byte(s)...)
}

// repeatedString writes each of ss, empty ones included (a node's
// omitted optional input is an empty name that keeps its position).
func (m *message) repeatedString(num protowire.Number, ss []string) {
	for _, s := range ss {
		m.tag(num, protowire.BytesType)
		m.append(protowire.AppendVarint(nil, uint64(len(s)))...)
		m.append([]byte(s)...)
	}
}

// message writes a nested message field.
func (m *message) message(num protowire.Number, c *message) {
	m.tag(num, protowire.BytesType)
	m.append(protowire.AppendVarint(nil, uint64(c.size))...)
	c.flush()
	m.flush()
	m.parts = append(m.parts, c.parts...)
	m.size += c.size
}

// payload writes a bytes field holding p's values little-endian.
func (m *message) payload(num protowire.Number, p part) {
	m.tag(num, protowire.BytesType)
	m.append(protowire.AppendVarint(nil, uint64(p.size()))...)
	m.flush()
	m.parts = append(m.parts, p)
	m.size += p.size()
}

// writeTo writes the message's bytes to w.
func (m *message) writeTo(w io.Writer) error {
	m.flush()
	for _, p := range m.parts {
		if err := writePart(w, p); err != nil {
			return err
		}
	}
	return nil
}

// chunk is how many bytes of a payload writePart converts at a time.
const chunk = 1 << 16

func writePart(w io.Writer, p part) error {
	if p.b != nil {
		_, err := w.Write(p.b)
		return err
	}
	buf := make([]byte, 0, chunk)
	for i, v := range p.f {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		if len(buf) == chunk || i == len(p.f)-1 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	for i, v := range p.i {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(v))
		if len(buf) == chunk || i == len(p.i)-1 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	return nil
}
