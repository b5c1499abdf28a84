//go:build !(linux || darwin || freebsd)

package imageshard

import "os"

// mapFile returns nil: on this system the Reader reads with ReadAt.
func mapFile(*os.File, int64) []byte { return nil }

// unmapFile is never called: mapFile maps nothing.
func unmapFile([]byte) error { return nil }
