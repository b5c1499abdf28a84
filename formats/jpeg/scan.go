// Copyright 2012 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package jpeg

// Specified in section B.2.3.
func (d *decoder) processSOS(n int) error {
	if d.nComp == 0 {
		return FormatError("missing SOF marker")
	}
	if n < 6 || 4+2*d.nComp < n || n%2 != 0 {
		return FormatError("SOS has wrong length")
	}
	if err := d.readFull(d.tmp[:n]); err != nil {
		return err
	}
	nComp := int(d.tmp[0])
	if n != 4+2*nComp {
		return FormatError("SOS length inconsistent with number of components")
	}
	var scan [maxComponents]struct {
		compIndex uint8
		td        uint8 // DC table selector.
		ta        uint8 // AC table selector.
	}
	totalHV := 0
	for i := 0; i < nComp; i++ {
		cs := d.tmp[1+2*i] // Component selector.
		compIndex := -1
		for j, comp := range d.comp[:d.nComp] {
			if cs == comp.c {
				compIndex = j
			}
		}
		if compIndex < 0 {
			return FormatError("unknown component selector")
		}
		scan[i].compIndex = uint8(compIndex)
		// Section B.2.3 states that "the value of Cs_j shall be different from
		// the values of Cs_1 through Cs_(j-1)". Since we have previously
		// verified that a frame's component identifiers (C_i values in section
		// B.2.2) are unique, it suffices to check that the implicit indexes
		// into d.comp are unique.
		for j := 0; j < i; j++ {
			if scan[i].compIndex == scan[j].compIndex {
				return FormatError("repeated component selector")
			}
		}
		totalHV += d.comp[compIndex].h * d.comp[compIndex].v

		// The baseline t <= 1 restriction is specified in table B.3.
		scan[i].td = d.tmp[2+2*i] >> 4
		if t := scan[i].td; t > maxTh || (d.baseline && t > 1) {
			return FormatError("bad Td value")
		}
		scan[i].ta = d.tmp[2+2*i] & 0x0f
		if t := scan[i].ta; t > maxTh || (d.baseline && t > 1) {
			return FormatError("bad Ta value")
		}
	}
	// Section B.2.3 states that if there is more than one component then the
	// total H*V values in a scan must be <= 10.
	if d.nComp > 1 && totalHV > 10 {
		return FormatError("total sampling factors too large")
	}

	// zigStart and zigEnd are the spectral selection bounds; ah and al are
	// the successive approximation high and low values (Ss, Se, Ah and Al).
	// For sequential JPEGs, these are 0/63/0/0, as per table B.3.
	zigStart, zigEnd, ah, al := int32(0), int32(blockSize-1), uint32(0), uint32(0)
	if d.progressive {
		zigStart = int32(d.tmp[1+2*nComp])
		zigEnd = int32(d.tmp[2+2*nComp])
		ah = uint32(d.tmp[3+2*nComp] >> 4)
		al = uint32(d.tmp[3+2*nComp] & 0x0f)
		if (zigStart == 0 && zigEnd != 0) || zigStart > zigEnd || blockSize <= zigEnd {
			return FormatError("bad spectral selection bounds")
		}
		if zigStart != 0 && nComp != 1 {
			return FormatError("progressive AC coefficients for more than one component")
		}
		if ah != 0 && ah != al+1 {
			return FormatError("bad successive approximation values")
		}
	}

	// mxx and myy are the number of MCUs (Minimum Coded Units) in the image.
	h0, v0 := d.comp[0].h, d.comp[0].v // The h and v values from the Y components.
	mxx := (d.width + 8*h0 - 1) / (8 * h0)
	myy := (d.height + 8*v0 - 1) / (8 * v0)
	if d.img == nil {
		if d.width == 0 || d.height == 0 {
			return FormatError("zero image size")
		}
		d.img = newImage(d, mxx, myy)
	}
	for i := 0; i < nComp; i++ {
		c := &d.img.comp[scan[i].compIndex]
		c.seen = true
		c.scans++
		if !d.progressive {
			c.setQuant(&d.quant[d.comp[scan[i].compIndex].tq])
		}
	}

	d.bits = bitReader{data: d.data, pos: d.pos}
	br := &d.bits
	mcu, expectedRST := 0, uint8(rst0Marker)
	var (
		dc [maxComponents]int32
		// bx and by are the location of the current block, in units of 8x8
		// blocks: the third block in the first row has (bx, by) = (2, 0).
		bx, by     int
		blockCount int
	)
	for my := 0; my < myy; my++ {
		for mx := 0; mx < mxx; mx++ {
			for i := 0; i < nComp; i++ {
				compIndex := scan[i].compIndex
				comp := &d.img.comp[compIndex]
				hi := d.comp[compIndex].h
				vi := d.comp[compIndex].v
				for j := 0; j < hi*vi; j++ {
					// The blocks are traversed one MCU at a time in interleaved
					// scans, left to right and top to bottom in scans of one
					// component, where blocks outside the image at the pixel
					// level have no data (see image/jpeg).
					if nComp != 1 {
						bx = hi*mx + j%hi
						by = vi*my + j/hi
					} else {
						q := mxx * hi
						bx = blockCount % q
						by = blockCount / q
						blockCount++
						if bx*8 >= d.width || by*8 >= d.height {
							continue
						}
					}
					b := comp.block(bx, by)
					if !d.progressive && comp.scans > 1 {
						// A sequential scan decodes each block afresh, even
						// one an earlier scan held. (Blocks start cleared.)
						*b = [blockSize]int16{}
					}
					if br.n < 32 {
						br.refill()
					}
					var err error
					if ah != 0 {
						err = d.refine(b, &d.huff[acTable][scan[i].ta], zigStart, zigEnd, 1<<al)
					} else {
						err = d.decodeBlock(b, &dc[compIndex], &d.huff[dcTable][scan[i].td], &d.huff[acTable][scan[i].ta], zigStart, zigEnd, al)
					}
					if err != nil {
						return err
					}
				} // for j
			} // for i
			if br.short() {
				return errShortHuffmanData
			}
			mcu++
			if d.ri > 0 && mcu%d.ri == 0 && mcu < mxx*myy {
				// For well-formed input, the RST[0-7] restart marker follows
				// immediately. For corrupt input, call findRST to try to
				// resynchronize.
				d.pos = br.reset()
				if err := d.readFull(d.tmp[:2]); err != nil {
					return err
				} else if d.tmp[0] != 0xff || d.tmp[1] != expectedRST {
					if err := d.findRST(expectedRST); err != nil {
						return err
					}
				}
				expectedRST++
				if expectedRST == rst7Marker+1 {
					expectedRST = rst0Marker
				}
				// Reset the Huffman decoder.
				d.bits = bitReader{data: d.data, pos: d.pos}
				// Reset the DC components, as per section F.2.1.3.1.
				dc = [maxComponents]int32{}
				// Reset the progressive decoder state, as per section G.1.2.2.
				d.eobRun = 0
			}
		} // for mx
	} // for my
	d.pos = br.reset()
	return nil
}

// decodeBlock decodes a block's DC coefficient (zigStart 0) and its AC
// coefficients zigStart…zigEnd into b, in natural order, each shifted left
// by al, as specified in sections F.2.2 and G.1.2.1. At least 32 bits
// must be unread.
func (d *decoder) decodeBlock(b *[blockSize]int16, dc *int32, dcHuff, acHuff *huffman, zigStart, zigEnd int32, al uint32) error {
	br := &d.bits
	zig := zigStart
	if zig == 0 {
		zig++
		// Decode the DC coefficient, as specified in section F.2.2.1.
		value, err := br.decodeHuffman(dcHuff)
		if err != nil {
			return err
		}
		if value > 16 {
			return UnsupportedError("excessive DC component")
		}
		*dc += br.receiveExtend(value)
		b[0] = int16(*dc << al)
	}
	if zig > zigEnd {
		return nil
	}
	if d.eobRun > 0 {
		d.eobRun--
		return nil
	}
	// Decode the AC coefficients, as specified in section F.2.2.2. The
	// unread bits are kept in locals (acc, n) in the loop, written back
	// to br around the calls that read it.
	acc, n := br.acc, br.n
	for ; zig <= zigEnd; zig++ {
		if n < 32 {
			br.acc, br.n = acc, n
			br.refill()
			acc, n = br.acc, br.n
		}
		e := acHuff.ac[acc>>(64-lutBits)]
		if e&acEOB != 0 {
			// End of block: an end-of-band run of 1, this block.
			acc <<= uint(e & 0x7f)
			n -= uint(e & 0x7f)
			break
		}
		if e != 0 && zig+(e>>8)&0x0f <= zigEnd {
			// A coefficient whose code and bits fit the table. (A run
			// past zigEnd takes the code alone, below.)
			acc <<= uint(e & 0xff)
			n -= uint(e & 0xff)
			zig += (e >> 8) & 0x0f
			b[unzig[zig&63]&63] = int16((e >> 16) << al)
			continue
		}
		br.acc, br.n = acc, n
		value, err := br.decodeHuffman(acHuff)
		if err != nil {
			return err
		}
		val0 := value >> 4
		val1 := value & 0x0f
		if val1 != 0 {
			zig += int32(val0)
			if zig > zigEnd {
				acc, n = br.acc, br.n
				break
			}
			b[unzig[zig&63]&63] = int16(br.receiveExtend(val1) << al)
		} else {
			if val0 != 0x0f {
				d.eobRun = uint16(1 << val0)
				if val0 != 0 {
					d.eobRun |= uint16(br.readBits(uint(val0)))
				}
				d.eobRun--
				acc, n = br.acc, br.n
				break
			}
			zig += 0x0f
		}
		acc, n = br.acc, br.n
	}
	br.acc, br.n = acc, n
	return nil
}

// refine decodes a successive approximation refinement block, as specified in
// section G.1.2.
func (d *decoder) refine(b *[blockSize]int16, h *huffman, zigStart, zigEnd, delta int32) error {
	br := &d.bits
	// Refining a DC component is trivial.
	if zigStart == 0 {
		if br.readBit() {
			b[0] |= int16(delta)
		}
		return nil
	}

	// Refining AC components is more complicated; see sections G.1.2.2 and G.1.2.3.
	zig := zigStart
	if d.eobRun == 0 {
	loop:
		for ; zig <= zigEnd; zig++ {
			if br.n < 32 {
				br.refill()
			}
			z := int32(0)
			value, err := br.decodeHuffman(h)
			if err != nil {
				return err
			}
			val0 := value >> 4
			val1 := value & 0x0f

			switch val1 {
			case 0:
				if val0 != 0x0f {
					d.eobRun = uint16(1 << val0)
					if val0 != 0 {
						d.eobRun |= uint16(br.readBits(uint(val0)))
					}
					break loop
				}
			case 1:
				z = delta
				if !br.readBit() {
					z = -z
				}
			default:
				return FormatError("unexpected Huffman code")
			}

			zig = d.refineNonZeroes(b, zig, zigEnd, int32(val0), delta)
			if zig > zigEnd {
				return FormatError("too many coefficients")
			}
			if z != 0 {
				b[unzig[zig]] = int16(z)
			}
		}
	}
	if d.eobRun > 0 {
		d.eobRun--
		d.refineNonZeroes(b, zig, zigEnd, -1, delta)
	}
	return nil
}

// refineNonZeroes refines non-zero entries of b in zig-zag order. If nz >= 0,
// the first nz zero entries are skipped over.
func (d *decoder) refineNonZeroes(b *[blockSize]int16, zig, zigEnd, nz, delta int32) int32 {
	br := &d.bits
	for ; zig <= zigEnd; zig++ {
		u := unzig[zig]
		if b[u] == 0 {
			if nz == 0 {
				break
			}
			nz--
			continue
		}
		if br.n < 1 {
			br.refill()
		}
		if !br.readBit() {
			continue
		}
		if b[u] >= 0 {
			b[u] += int16(delta)
		} else {
			b[u] -= int16(delta)
		}
	}
	return zig
}

// findRST advances past the next RST restart marker that matches expectedRST.
// Other than I/O errors, it is also an error if we encounter an {0xFF, M}
// two-byte marker sequence where M is not 0x00, 0xFF or the expectedRST.
//
// Precondition: d.tmp[:2] holds the next two bytes of JPEG-encoded input.
func (d *decoder) findRST(expectedRST uint8) error {
	for {
		// i is the index such that, at the bottom of the loop, we read 2-i
		// bytes into d.tmp[i:2], maintaining the invariant that d.tmp[:2]
		// holds the next two bytes of JPEG-encoded input. It is either 0 or 1,
		// so that each iteration advances by 1 or 2 bytes (or returns).
		i := 0

		if d.tmp[0] == 0xff {
			if d.tmp[1] == expectedRST {
				return nil
			} else if d.tmp[1] == 0xff {
				i = 1
			} else if d.tmp[1] != 0x00 {
				// Any marker that's not 0x00, 0xff or expectedRST is a fatal
				// FormatError (see image/jpeg).
				return FormatError("bad RST marker")
			}

		} else if d.tmp[1] == 0xff {
			d.tmp[0] = 0xff
			i = 1
		}

		if err := d.readFull(d.tmp[i:2]); err != nil {
			return err
		}
	}
}
