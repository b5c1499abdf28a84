// Package npy reads NumPy arrays: single .npy files and .npz archives of
// them (a zip file with one NAME.npy entry per array), as np.save, np.savez
// and np.savez_compressed write them. Google's ViT checkpoints (vit_jax,
// big_vision) are .npz files of float32 arrays.
//
// A .npy file is
//
//	6 bytes   magic "\x93NUMPY"
//	2 bytes   format version (1.0, 2.0 or 3.0)
//	2|4 bytes header length, little-endian (2 bytes in version 1.0)
//	header    a Python dict literal, e.g.
//	          {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
//	          padded with spaces and a final newline
//	data      the elements in C (row-major) order
//
// Only little-endian floating point arrays ('<f2', '<f4', '<f8') are
// accepted; they are converted to float32, and Fortran-order arrays (as
// NumPy saves a transposed view) to C order. Every size read from the
// input is bounded and checked before use, and memory grows only with the
// data actually present.
package npy
