package jpeg

// idctBlock is idctBlockGeneric; the AVX2 version replaces it where the
// processor has AVX2.
var idctBlock = idctBlockGeneric
