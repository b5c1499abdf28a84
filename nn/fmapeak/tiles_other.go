//go:build !linux || !amd64 || purego

package fmapeak

import "errors"

// requestTileData: the tile kernels are built for Linux on amd64 alone.
func requestTileData() error {
	return errors.New("AMX tiles are used on Linux on amd64 only, outside the purego build")
}
