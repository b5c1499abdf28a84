// Package comm lets the processes of a data-parallel job exchange tensors:
// in-place allreduce (sum, max), broadcast, barrier and abort, over MPI when
// the binary is built with the build tag mpi, or as identities in a
// single-process run.
//
// A job is started as
//
//	mpirun -np N vit-train train …
//
// and every process calls [FromEnv] once, early, then uses the returned
// [Communicator] for the whole run and closes it at the end:
//
//	c, err := comm.FromEnv()
//	if err != nil { … }
//	defer c.Close()
//
// Collective operations (every method except Rank, Size, Abort and Close)
// must be called by every rank of the job, in the same order, with buffers of
// the same length; a rank that skips one makes the others wait forever.
//
// Built on top of the communicator:
//
//   - [Buckets] and [Reducer] average gradients across ranks bucket by bucket
//     in reused flat buffers, as PyTorch's DistributedDataParallel does;
//   - [Checksum] and [CheckReplicas] verify that every rank holds the same
//     weights;
//   - [NewGroup] runs N ranks as goroutines of one process, for tests.
package comm

import (
	"errors"
	"fmt"
	"os"
	"strconv"
)

// Communicator is one rank's handle on the processes of a job.
//
// Its methods may be called from any goroutine; calls are serialised, and
// collective calls issued concurrently by several goroutines reach the
// transport in an order that can differ from rank to rank, so callers that
// issue them concurrently must order them themselves (see [Reducer]).
type Communicator interface {
	// Rank returns this process's index in [0, Size()).
	Rank() int
	// Size returns the number of processes of the job.
	Size() int

	// AllreduceSumFloat32 replaces buf, on every rank, by the element-wise
	// sum of every rank's buf.
	AllreduceSumFloat32(buf []float32) error
	// AllreduceSumFloat64 replaces buf, on every rank, by the element-wise
	// sum of every rank's buf.
	AllreduceSumFloat64(buf []float64) error
	// AllreduceSumInt64 replaces buf, on every rank, by the element-wise sum
	// of every rank's buf.
	AllreduceSumInt64(buf []int64) error
	// AllreduceMaxFloat64 replaces buf, on every rank, by the element-wise
	// maximum of every rank's buf.
	AllreduceMaxFloat64(buf []float64) error
	// AllreduceMaxInt64 replaces buf, on every rank, by the element-wise
	// maximum of every rank's buf.
	AllreduceMaxInt64(buf []int64) error

	// BroadcastFloat32 copies root's buf into every other rank's buf.
	BroadcastFloat32(buf []float32, root int) error
	// BroadcastFloat64 copies root's buf into every other rank's buf.
	BroadcastFloat64(buf []float64, root int) error
	// BroadcastInt64 copies root's buf into every other rank's buf.
	BroadcastInt64(buf []int64, root int) error
	// BroadcastBytes copies root's buf into every other rank's buf.
	BroadcastBytes(buf []byte, root int) error

	// Barrier returns once every rank has called it.
	Barrier() error

	// Abort writes msg to standard error and ends every process of the job
	// with exit status code (1 if code is 0 or outside [1, 255]). It is for
	// errors after which the ranks cannot go on together; it does not return,
	// except in a [NewGroup] member, whose Abort fails the group's operations
	// instead of ending the process.
	Abort(code int, msg string)

	// Close releases the communicator (MPI_Finalize for MPI). Every rank
	// calls it once, after its last collective operation; later operations
	// return [ErrClosed]. Closing again returns nil.
	Close() error
}

// ErrClosed is returned by the operations of a closed communicator.
var ErrClosed = errors.New("comm: communicator closed")

// ErrAborted is wrapped by the errors of a [NewGroup] member's operations
// after a member called Abort.
var ErrAborted = errors.New("comm: job aborted")

// ErrNoMPI is wrapped by the error of [FromEnv] in a binary built without
// MPI support that was started by an MPI launcher with more than one process.
var ErrNoMPI = errors.New("this binary was built without MPI support; rebuild with -tags mpi")

// maxCount is the largest element count of one operation: MPI counts are C
// ints.
const maxCount = 1<<31 - 1

// launcherSize returns the number of processes an MPI launcher started, from
// the environment variables Open MPI (OMPI_COMM_WORLD_SIZE) or a PMI-based
// launcher such as MPICH's Hydra or Slurm (PMI_SIZE) gives each process, and
// which variable said so; 0 and "" when neither is set.
func launcherSize() (int, string, error) {
	for _, name := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"} {
		v, ok := os.LookupEnv(name)
		if !ok || v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, name, fmt.Errorf("comm: %s=%q is not a process count", name, v)
		}
		return n, name, nil
	}
	return 0, "", nil
}

// exitCode maps an Abort code to a process exit status in [1, 255].
func exitCode(code int) int {
	if code < 1 || code > 255 {
		return 1
	}
	return code
}

// checkRoot returns an error unless root is a rank of a job of size ranks.
func checkRoot(root, size int) error {
	if root < 0 || root >= size {
		return fmt.Errorf("comm: broadcast root %d outside [0, %d)", root, size)
	}
	return nil
}

// checkCount returns an error if n elements are too many for one operation.
func checkCount(n int) error {
	if n > maxCount {
		return fmt.Errorf("comm: %d elements in one operation, at most %d", n, maxCount)
	}
	return nil
}
