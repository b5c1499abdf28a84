package blas

import (
	"time"

	"golang.org/x/sys/unix"
)

// cpuTime is the CPU time this process has used: on a shared machine,
// work per CPU second measures a kernel's speed even while the cores are
// also running other programs.
func cpuTime() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
