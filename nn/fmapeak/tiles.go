package fmapeak

import (
	"errors"
	"sync"

	"golang.org/x/sys/cpu"
)

// TilesUsable reports whether this process may run AMX tile instructions,
// nil if it may, else why not. The processor must list AMX-TILE and
// AMX-BF16 (a hypervisor may hide them on capable hardware), and Linux
// must grant the process the tile data state, which the first call asks
// for (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA): without the
// grant the first tile instruction raises SIGILL. The grant covers every
// thread of the process, those started later too.
func TilesUsable() error { return tilesUsable() }

// ErrNoTiles is TilesUsable's answer where the processor lists no AMX.
var ErrNoTiles = errors.New("the processor lists no AMX-TILE and AMX-BF16")

var tilesUsable = sync.OnceValue(func() error {
	if !cpu.X86.HasAMXTile || !cpu.X86.HasAMXBF16 {
		return ErrNoTiles
	}
	return requestTileData()
})
