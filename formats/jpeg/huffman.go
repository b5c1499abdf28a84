// Copyright 2009 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package jpeg

import "encoding/binary"

// maxCodeLength is the maximum (inclusive) number of bits in a Huffman code.
const maxCodeLength = 16

// maxNCodes is the maximum (inclusive) number of codes in a Huffman tree.
const maxNCodes = 256

// lutBits is the log-2 size of the Huffman decoder's look-up tables.
const lutBits = 9

// acEOB marks the ac table's entries of the end-of-block symbol.
const acEOB = 0x80

// huffman is a Huffman decoder, specified in section C.
type huffman struct {
	// nCodes is the number of codes in the tree.
	nCodes int32
	// lut is the look-up table for the next lutBits bits in the bit-stream.
	// The high 8 bits of the uint16 are the encoded value. The low 8 bits
	// are the code length, or 0 if the code is longer than lutBits.
	lut [1 << lutBits]uint16
	// ac is the look-up table of an AC coefficient whose code and extra
	// bits together fit in lutBits bits: value<<16 | run<<8 | total bits;
	// acEOB | code length for the end-of-block symbol; 0 otherwise.
	ac [1 << lutBits]int32
	// vals are the decoded values, sorted by their encoding.
	vals [maxNCodes]uint8
	// minCodes[i] is the minimum code of length i+1, or -1 if there are no
	// codes of that length.
	minCodes [maxCodeLength]int32
	// maxCodes[i] is the maximum code of length i+1, or -1 if there are no
	// codes of that length.
	maxCodes [maxCodeLength]int32
	// valsIndices[i] is the index into vals of minCodes[i].
	valsIndices [maxCodeLength]int32
}

// errShortHuffmanData means that an unexpected EOF occurred while decoding
// Huffman data.
var errShortHuffmanData = FormatError("short Huffman data")

// bitReader reads the entropy-coded bytes of a scan, MSB first, undoing
// the byte stuffing (0xff 0x00). At a marker, or at the end of the data, it
// supplies zero bytes instead and counts them: a scan that uses them is
// short (see short).
type bitReader struct {
	data   []byte
	pos    int    // the next byte of data to load into acc
	acc    uint64 // the unread bits, left-aligned
	n      uint   // how many bits of acc are unread
	padded uint   // how many zero bytes were supplied past the data
}

// refill loads bytes until at least 57 bits are unread.
func (br *bitReader) refill() {
	// Fast path: 8 bytes without 0xff load at once. Bits past the ones
	// counted in n are the next bytes' own, so loading them again later
	// ORs in the same bits.
	if br.pos+8 <= len(br.data) && br.padded == 0 {
		x := binary.BigEndian.Uint64(br.data[br.pos:])
		if (^x-0x0101010101010101)&x&0x8080808080808080 == 0 { // no 0xff byte
			br.acc |= x >> br.n
			br.pos += int((63 - br.n) >> 3)
			br.n |= 56
			return
		}
	}
	for br.n <= 56 {
		var b byte
		if br.pos < len(br.data) && br.padded == 0 {
			b = br.data[br.pos]
			if b == 0xff {
				if br.pos+1 < len(br.data) && br.data[br.pos+1] == 0x00 {
					br.pos += 2
				} else {
					// A marker, or 0xff at the end: stop at it.
					b = 0
					br.padded++
				}
			} else {
				br.pos++
			}
		} else {
			br.padded++
		}
		br.acc |= uint64(b) << (56 - br.n)
		br.n += 8
	}
}

// short reports whether bits past the scan's data have been read.
func (br *bitReader) short() bool { return br.n < 8*br.padded }

// peek returns the next k (≤ 57) bits; refill must have been called.
func (br *bitReader) peek(k uint) uint64 { return br.acc >> (64 - k) }

// skip drops k unread bits.
func (br *bitReader) skip(k uint) {
	br.acc <<= k
	br.n -= k
}

// reset drops the unread bits, at a restart marker or at the end of a
// scan, and returns the position of the first byte not read.
func (br *bitReader) reset() int {
	// Whole bytes loaded but not read are given back.
	back := int(br.n/8) - int(br.padded)
	if back > 0 {
		// Stuffed bytes (0xff 0x00) are given back as two.
		for ; back > 0 && br.pos > 0; back-- {
			br.pos--
			if br.pos > 0 && br.data[br.pos] == 0x00 && br.data[br.pos-1] == 0xff {
				br.pos--
			}
		}
	}
	br.acc, br.n, br.padded = 0, 0, 0
	return br.pos
}

// decodeHuffman returns the next Huffman-coded value; at least 16 bits
// must be unread.
func (br *bitReader) decodeHuffman(h *huffman) (uint8, error) {
	if v := h.lut[br.peek(lutBits)]; v != 0 {
		br.skip(uint(v & 0xff))
		return uint8(v >> 8), nil
	}
	return br.decodeLong(h)
}

// decodeLong decodes a code longer than lutBits bits.
func (br *bitReader) decodeLong(h *huffman) (uint8, error) {
	if h.nCodes == 0 {
		return 0, FormatError("uninitialized Huffman table")
	}
	code := int32(br.peek(maxCodeLength))
	for i := lutBits; i < maxCodeLength; i++ {
		c := code >> (maxCodeLength - 1 - i)
		if c <= h.maxCodes[i] {
			br.skip(uint(i + 1))
			return h.vals[(h.valsIndices[i]+c-h.minCodes[i])&(maxNCodes-1)], nil
		}
	}
	return 0, FormatError("bad Huffman code")
}

// receiveExtend is the composition of RECEIVE and EXTEND, specified in
// section F.2.2.1; t ≤ 16 and at least t bits must be unread.
func (br *bitReader) receiveExtend(t uint8) int32 {
	if t == 0 {
		return 0
	}
	x := int32(br.peek(uint(t)))
	br.skip(uint(t))
	if x < 1<<(t-1) {
		x += -1<<t + 1
	}
	return x
}

// readBits returns the next n bits as a number.
func (br *bitReader) readBits(n uint) uint32 {
	if n == 0 {
		return 0
	}
	x := uint32(br.peek(n))
	br.skip(n)
	return x
}

// readBit returns the next bit.
func (br *bitReader) readBit() bool {
	b := br.acc>>63 != 0
	br.skip(1)
	return b
}

// processDHT processes a Define Huffman Table marker, and initializes a huffman
// struct from its contents. Specified in section B.2.4.2.
func (d *decoder) processDHT(n int) error {
	for n > 0 {
		if n < 17 {
			return FormatError("DHT has wrong length")
		}
		if err := d.readFull(d.tmp[:17]); err != nil {
			return err
		}
		tc := d.tmp[0] >> 4
		if tc > maxTc {
			return FormatError("bad Tc value")
		}
		th := d.tmp[0] & 0x0f
		// The baseline th <= 1 restriction is specified in table B.5.
		if th > maxTh || (d.baseline && th > 1) {
			return FormatError("bad Th value")
		}
		h := &d.huff[tc][th]

		// Read nCodes and h.vals (and derive h.nCodes).
		// nCodes[i] is the number of codes with code length i.
		// h.nCodes is the total number of codes.
		h.nCodes = 0
		var nCodes [maxCodeLength]int32
		for i := range nCodes {
			nCodes[i] = int32(d.tmp[i+1])
			h.nCodes += nCodes[i]
		}
		if h.nCodes == 0 {
			return FormatError("Huffman table has zero length")
		}
		if h.nCodes > maxNCodes {
			return FormatError("Huffman table has excessive length")
		}
		n -= int(h.nCodes) + 17
		if n < 0 {
			return FormatError("DHT has wrong length")
		}
		if err := d.readFull(h.vals[:h.nCodes]); err != nil {
			return err
		}
		// A table with more codes of some length than the shorter codes
		// leave room for is not a prefix code (libjpeg refuses it too;
		// image/jpeg decodes such files in ways of its own).
		code := int32(0)
		for i, n := range nCodes {
			code += n
			if code > 1<<(i+1) {
				return FormatError("over-subscribed Huffman table")
			}
			code <<= 1
		}
		h.build(nCodes)
	}
	return nil
}

// build derives the look-up tables and the long-code tables from the
// number of codes of each length.
func (h *huffman) build(nCodes [maxCodeLength]int32) {
	clear(h.lut[:])
	clear(h.ac[:])
	var x, code uint32
	for i := uint32(0); i < lutBits; i++ {
		code <<= 1
		for j := int32(0); j < nCodes[i]; j++ {
			// The code length is 1+i: every lutBits-bit sequence whose
			// high bits are code decodes to vals[x].
			base := code << (lutBits - 1 - i)
			length := 1 + i
			lutValue := uint16(h.vals[x])<<8 | uint16(length)
			for k := uint32(0); k < 1<<(lutBits-1-i); k++ {
				// An over-subscribed table wraps around, as in image/jpeg.
				idx := (base | k) & (1<<lutBits - 1)
				h.lut[idx] = lutValue
				h.ac[idx] = acEntry(h.vals[x], length, idx<<(32-lutBits)<<length)
			}
			code++
			x++
		}
	}

	// Derive minCodes, maxCodes, and valsIndices.
	var c, index int32
	for i, n := range nCodes {
		if n == 0 {
			h.minCodes[i] = -1
			h.maxCodes[i] = -1
			h.valsIndices[i] = -1
		} else {
			h.minCodes[i] = c
			h.maxCodes[i] = c + n - 1
			h.valsIndices[i] = index
			c += n
			index += n
		}
		c <<= 1
	}
}

// acEntry is the ac table's entry for the AC symbol rs (run<<4 | size)
// with a code of length bits, followed by the bits left-aligned in rest:
// a coefficient, an end of block (acEOB | length), or 0 for other symbols
// and for coefficients whose bits do not fit.
func acEntry(rs uint8, length uint32, rest uint32) int32 {
	run, size := uint32(rs>>4), uint32(rs&0x0f)
	if rs == 0 {
		return int32(acEOB | length) // end of block
	}
	if size == 0 || length+size > lutBits {
		return 0
	}
	v := int32(rest >> (32 - size))
	if v < 1<<(size-1) {
		v += -1<<size + 1
	}
	return v<<16 | int32(run<<8|(length+size))
}
