package jpeg

// idctBlock dequantises coef with q (both in natural order), runs the
// inverse DCT and writes the 8×8 samples, level-shifted by 128 and clipped
// to [0, 255], to dst with the given stride: idctBlockGeneric, or its AVX2
// version (the same bytes) where the processor has AVX2.
var idctBlock = idctBlockGeneric
