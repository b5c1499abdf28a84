package comm

import (
	"fmt"
	"os"
	"sync/atomic"
)

// Local returns the communicator of a job of one process: rank 0 of size 1,
// every reduction and broadcast leaves its buffer as it is, and Barrier
// returns at once. It needs no MPI and exists in every build.
func Local() Communicator { return &local{} }

// local is the one-process Communicator.
type local struct{ closed atomic.Bool }

func (l *local) Rank() int { return 0 }
func (l *local) Size() int { return 1 }

// op checks an operation on n elements.
func (l *local) op(n int) error {
	if l.closed.Load() {
		return ErrClosed
	}
	return checkCount(n)
}

// bcast checks a broadcast of n elements from root.
func (l *local) bcast(n, root int) error {
	if err := l.op(n); err != nil {
		return err
	}
	return checkRoot(root, 1)
}

func (l *local) AllreduceSumFloat32(buf []float32) error        { return l.op(len(buf)) }
func (l *local) AllreduceSumFloat64(buf []float64) error        { return l.op(len(buf)) }
func (l *local) AllreduceSumInt64(buf []int64) error            { return l.op(len(buf)) }
func (l *local) AllreduceMaxFloat64(buf []float64) error        { return l.op(len(buf)) }
func (l *local) AllreduceMaxInt64(buf []int64) error            { return l.op(len(buf)) }
func (l *local) BroadcastFloat32(buf []float32, root int) error { return l.bcast(len(buf), root) }
func (l *local) BroadcastFloat64(buf []float64, root int) error { return l.bcast(len(buf), root) }
func (l *local) BroadcastInt64(buf []int64, root int) error     { return l.bcast(len(buf), root) }
func (l *local) BroadcastBytes(buf []byte, root int) error      { return l.bcast(len(buf), root) }
func (l *local) Barrier() error                                 { return l.op(0) }
func (l *local) Abort(code int, msg string)                     { abortExit(0, code, msg) }
func (l *local) String() string                                 { return "comm.Local (rank 0 of 1)" }

func (l *local) Close() error {
	l.closed.Store(true)
	return nil
}

// abortExit writes an abort message for rank and ends the process.
func abortExit(rank, code int, msg string) {
	writeAbort(rank, msg)
	os.Exit(exitCode(code))
}

// writeAbort writes rank's abort message to standard error.
func writeAbort(rank int, msg string) {
	fmt.Fprintf(os.Stderr, "comm: rank %d aborts the job: %s\n", rank, msg)
}
