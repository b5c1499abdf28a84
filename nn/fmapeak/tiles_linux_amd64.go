//go:build !purego

package fmapeak

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// requestTileData asks Linux for permission to use the AMX tile data.
func requestTileData() error {
	const archReqXcompPerm, xfeatureXtiledata = 0x1023, 18
	if _, _, errno := unix.Syscall(unix.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0); errno != 0 {
		return fmt.Errorf("Linux refused the tile data (arch_prctl ARCH_REQ_XCOMP_PERM): %v", errno)
	}
	return nil
}
