// Copyright 2009 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package jpeg decodes baseline and progressive JPEG files (ITU-T T.81) as
// Go's image/jpeg does, from bytes already in memory, in two steps:
//
//   - Decode parses the file and entropy-decodes every scan into the
//     blocks' quantised DCT coefficients. Every error a file can hold is
//     found here.
//   - Image.RGB then runs the inverse DCT, chroma upsampling and colour
//     conversion on the blocks that a rectangle of the image covers alone,
//     at full size or reduced to 1/2, 1/4 or 1/8 (the DCT scaling libjpeg
//     offers), into planar uint8 RGB: (3, h, w) bytes, R then G then B.
//     Image.Std returns the whole image as image/jpeg's Decode does.
//
// At full size the samples are image/jpeg's to the bit: the same integer
// IDCT (image/jpeg's, with AVX2 assembly where the processor has it), the
// same nearest-neighbour chroma upsampling and
// image/color's fixed-point YCbCr→RGB arithmetic (AVX2 too), checked
// against image/jpeg by decode_test.go and the fuzz test; idct_test.go
// checks the assembly against the Go code to the bit. A reduced scale gives each pixel
// the mean of its 2×2, 4×4 or 8×8 square, computed from all the block's
// coefficients in floating point (libjpeg's reduced IDCTs drop the high
// frequencies instead); subsampled chroma is reduced less, as in libjpeg (4:2:0
// chroma at 1/2 is transformed at full size). scaled_test.go states the
// tolerance against the full-size image averaged over the same squares.
//
// The package reads the formats image/jpeg reads: 8-bit sequential and
// progressive JPEGs of 1, 3 or 4 components with image/jpeg's chroma
// subsampling ratios. It starts from image/jpeg's reader (BSD licence, see
// LICENSE); the marker parsing and the format checks are image/jpeg's, the
// entropy decoder reads the bytes through a 64-bit bit buffer with 9-bit
// look-up tables that decode an AC coefficient's run, size and value in one
// step. Unlike image/jpeg, it refuses Huffman tables that are not prefix
// codes (more codes of a length than the shorter ones leave room for), as
// libjpeg does.
package jpeg
