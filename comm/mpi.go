//go:build mpi

package comm

/*
#cgo pkg-config: ompi-c
#include <mpi.h>

enum { vt_f32 = 1, vt_f64, vt_i64, vt_byte };

static MPI_Datatype vt_type(int t) {
	switch (t) {
	case vt_f32: return MPI_FLOAT;
	case vt_f64: return MPI_DOUBLE;
	case vt_i64: return MPI_INT64_T;
	default: return MPI_BYTE;
	}
}

// vt_init initialises MPI for calls from one thread at a time and makes
// errors on MPI_COMM_WORLD return codes instead of ending the job.
static int vt_init(int *provided, int *rank, int *size) {
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
	if (rc != MPI_SUCCESS) return rc;
	if (*provided < MPI_THREAD_FUNNELED) return -1;
	rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Comm_rank(MPI_COMM_WORLD, rank);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_size(MPI_COMM_WORLD, size);
}

static int vt_allreduce(void *buf, int n, int t, int max) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, vt_type(t), max ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
}

static int vt_bcast(void *buf, int n, int t, int root) {
	return MPI_Bcast(buf, n, vt_type(t), root, MPI_COMM_WORLD);
}

static int vt_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
static int vt_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }
static int vt_finalize(void) { return MPI_Finalize(); }

static int vt_thread_funneled(void) { return MPI_THREAD_FUNNELED; }

static void vt_error_string(int code, char *s, int *len) {
	if (MPI_Error_string(code, s, len) != MPI_SUCCESS) *len = 0;
}

static int vt_max_error_string(void) { return MPI_MAX_ERROR_STRING; }
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// WithMPI tells whether this binary was built with MPI support (build tag
// mpi).
const WithMPI = true

// FromEnv returns the communicator of this process: the MPI communicator of
// the job when an MPI launcher started the process (OMPI_COMM_WORLD_SIZE or
// PMI_SIZE is set, whatever the number of processes), [Local] otherwise. MPI
// is initialised once per process; after the MPI communicator is closed,
// FromEnv returns an error.
func FromEnv() (Communicator, error) {
	n, _, err := launcherSize()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return Local(), nil
	}
	return InitMPI()
}

var (
	mpiMu    sync.Mutex
	mpiWorld *mpiComm
)

// InitMPI initialises MPI (MPI_Init_thread, asking for
// MPI_THREAD_SERIALIZED and accepting MPI_THREAD_FUNNELED) on a goroutine
// locked to its OS thread, through which every later MPI call of the returned
// communicator passes, and returns the communicator of MPI_COMM_WORLD.
// Calling it again returns the same communicator until it is closed; MPI
// cannot be initialised again after that.
func InitMPI() (Communicator, error) {
	mpiMu.Lock()
	defer mpiMu.Unlock()
	if mpiWorld != nil {
		if mpiWorld.isClosed() {
			return nil, fmt.Errorf("comm: MPI was finalised; it cannot be initialised again")
		}
		return mpiWorld, nil
	}
	c := &mpiComm{reqs: make(chan *request)}
	c.pool.New = func() any { return &request{done: make(chan error, 1)} }
	started := make(chan error, 1)
	go c.loop(started)
	if err := <-started; err != nil {
		return nil, err
	}
	mpiWorld = c
	return c, nil
}

// request is one MPI call for the MPI goroutine.
type request struct {
	kind opKind
	ptr  unsafe.Pointer
	n    int
	root int
	done chan error
}

// opFinalize asks the MPI goroutine to finalise MPI and exit; opAbort to
// abort the job.
const (
	opFinalize opKind = 100 + iota
	opAbort
)

// mpiComm is the Communicator of MPI_COMM_WORLD.
type mpiComm struct {
	rank, size int
	reqs       chan *request
	pool       sync.Pool

	mu     sync.RWMutex // held for reading while sending on reqs
	closed bool
}

// loop owns the OS thread that calls MPI: it initialises MPI, reports to
// started, and serves requests until asked to finalise.
func (c *mpiComm) loop(started chan<- error) {
	runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
	var provided, rank, size C.int
	if rc := C.vt_init(&provided, &rank, &size); rc != C.MPI_SUCCESS {
		if rc == -1 {
			started <- fmt.Errorf("comm: MPI provides thread level %d, below MPI_THREAD_FUNNELED (%d)", provided, C.vt_thread_funneled())
		} else {
			started <- mpiError("MPI_Init_thread", rc)
		}
		return
	}
	c.rank, c.size = int(rank), int(size)
	started <- nil
	for req := range c.reqs {
		var rc C.int
		switch req.kind {
		case opSumF32:
			rc = C.vt_allreduce(req.ptr, C.int(req.n), C.vt_f32, 0)
		case opSumF64:
			rc = C.vt_allreduce(req.ptr, C.int(req.n), C.vt_f64, 0)
		case opSumI64:
			rc = C.vt_allreduce(req.ptr, C.int(req.n), C.vt_i64, 0)
		case opMaxF64:
			rc = C.vt_allreduce(req.ptr, C.int(req.n), C.vt_f64, 1)
		case opMaxI64:
			rc = C.vt_allreduce(req.ptr, C.int(req.n), C.vt_i64, 1)
		case opBcastF32:
			rc = C.vt_bcast(req.ptr, C.int(req.n), C.vt_f32, C.int(req.root))
		case opBcastF64:
			rc = C.vt_bcast(req.ptr, C.int(req.n), C.vt_f64, C.int(req.root))
		case opBcastI64:
			rc = C.vt_bcast(req.ptr, C.int(req.n), C.vt_i64, C.int(req.root))
		case opBcastBytes:
			rc = C.vt_bcast(req.ptr, C.int(req.n), C.vt_byte, C.int(req.root))
		case opBarrier:
			rc = C.vt_barrier()
		case opAbort:
			C.vt_abort(C.int(req.root))
			os.Exit(exitCode(req.root)) // MPI_Abort should not return
		case opFinalize:
			rc = C.vt_finalize()
			req.done <- mpiCallError(req.kind, rc)
			return
		}
		req.done <- mpiCallError(req.kind, rc)
	}
}

// call runs one operation on the MPI goroutine and waits for it.
func (c *mpiComm) call(kind opKind, ptr unsafe.Pointer, n, root int) error {
	if err := checkCount(n); err != nil {
		return err
	}
	req := c.pool.Get().(*request)
	req.kind, req.ptr, req.n, req.root = kind, ptr, n, root
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		req.ptr = nil
		c.pool.Put(req)
		return ErrClosed
	}
	c.reqs <- req
	c.mu.RUnlock()
	err := <-req.done
	req.ptr = nil
	c.pool.Put(req)
	return err
}

// bcast checks root and broadcasts n elements at ptr.
func (c *mpiComm) bcast(kind opKind, ptr unsafe.Pointer, n, root int) error {
	if err := checkRoot(root, c.size); err != nil {
		return err
	}
	return c.call(kind, ptr, n, root)
}

func (c *mpiComm) isClosed() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.closed
}

func (c *mpiComm) Rank() int { return c.rank }
func (c *mpiComm) Size() int { return c.size }

func (c *mpiComm) AllreduceSumFloat32(buf []float32) error {
	defer runtime.KeepAlive(buf)
	return c.call(opSumF32, unsafe.Pointer(unsafe.SliceData(buf)), len(buf), 0)
}
func (c *mpiComm) AllreduceSumFloat64(buf []float64) error {
	defer runtime.KeepAlive(buf)
	return c.call(opSumF64, unsafe.Pointer(unsafe.SliceData(buf)), len(buf), 0)
}
func (c *mpiComm) AllreduceSumInt64(buf []int64) error {
	defer runtime.KeepAlive(buf)
	return c.call(opSumI64, unsafe.Pointer(unsafe.SliceData(buf)), len(buf), 0)
}
func (c *mpiComm) AllreduceMaxFloat64(buf []float64) error {
	defer runtime.KeepAlive(buf)
	return c.call(opMaxF64, unsafe.Pointer(unsafe.SliceData(buf)), len(buf), 0)
}
func (c *mpiComm) AllreduceMaxInt64(buf []int64) error {
	defer runtime.KeepAlive(buf)
	return c.call(opMaxI64, unsafe.Pointer(unsafe.SliceData(buf)), len(buf), 0)
}
func (c *mpiComm) BroadcastFloat32(buf []float32, root int) error {
	defer runtime.KeepAlive(buf)
	return c.bcast(opBcastF32, unsafe.Pointer(unsafe.SliceData(buf)), len(buf), root)
}
func (c *mpiComm) BroadcastFloat64(buf []float64, root int) error {
	defer runtime.KeepAlive(buf)
	return c.bcast(opBcastF64, unsafe.Pointer(unsafe.SliceData(buf)), len(buf), root)
}
func (c *mpiComm) BroadcastInt64(buf []int64, root int) error {
	defer runtime.KeepAlive(buf)
	return c.bcast(opBcastI64, unsafe.Pointer(unsafe.SliceData(buf)), len(buf), root)
}
func (c *mpiComm) BroadcastBytes(buf []byte, root int) error {
	defer runtime.KeepAlive(buf)
	return c.bcast(opBcastBytes, unsafe.Pointer(unsafe.SliceData(buf)), len(buf), root)
}
func (c *mpiComm) Barrier() error { return c.call(opBarrier, nil, 0, 0) }

// Abort hands MPI_Abort to the MPI goroutine. If that goroutine is still busy
// after a second (typically blocked in a collective that a failed rank never
// joins), it calls MPI_Abort from the calling thread instead, outside the
// declared thread level, as the job is ending anyway.
func (c *mpiComm) Abort(code int, msg string) {
	writeAbort(c.rank, msg)
	code = exitCode(code)
	c.mu.RLock()
	if !c.closed {
		req := &request{kind: opAbort, root: code, done: make(chan error, 1)}
		select {
		case c.reqs <- req:
			c.mu.RUnlock()
			time.Sleep(10 * time.Second) // the MPI goroutine ends the process
		case <-time.After(time.Second):
			c.mu.RUnlock()
			C.vt_abort(C.int(code))
		}
	} else {
		c.mu.RUnlock()
	}
	os.Exit(code)
}

// Close finalises MPI. Every rank calls it after its last collective.
func (c *mpiComm) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	req := &request{kind: opFinalize, done: make(chan error, 1)}
	c.reqs <- req
	c.mu.Unlock()
	return <-req.done
}

func (c *mpiComm) String() string {
	return fmt.Sprintf("comm.MPI (rank %d of %d)", c.rank, c.size)
}

// mpiCallError returns nil for MPI_SUCCESS and an error naming the operation
// otherwise.
func mpiCallError(kind opKind, rc C.int) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	name := "MPI_Finalize"
	if kind < opFinalize {
		name = kind.String()
	}
	return mpiError(name, rc)
}

// mpiError describes the MPI error code rc of the call name.
func mpiError(name string, rc C.int) error {
	buf := make([]byte, int(C.vt_max_error_string()))
	var n C.int
	C.vt_error_string(rc, (*C.char)(unsafe.Pointer(&buf[0])), &n)
	if n > 0 {
		return fmt.Errorf("comm: %s: MPI error %d: %s", name, int(rc), string(buf[:n]))
	}
	return fmt.Errorf("comm: %s: MPI error %d", name, int(rc))
}
