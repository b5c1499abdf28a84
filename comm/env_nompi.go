//go:build !mpi

package comm

import "fmt"

// WithMPI tells whether this binary was built with MPI support (build tag
// mpi).
const WithMPI = false

// FromEnv returns the communicator of this process. This binary was built
// without MPI support, so it returns [Local] unless an MPI launcher started
// the process as one of several (OMPI_COMM_WORLD_SIZE or PMI_SIZE greater
// than 1): then it returns an error wrapping [ErrNoMPI] rather than let each
// process train alone.
func FromEnv() (Communicator, error) {
	n, name, err := launcherSize()
	if err != nil {
		return nil, err
	}
	if n > 1 {
		return nil, fmt.Errorf("comm: %s=%d says this process is one of %d started by an MPI launcher, but %w", name, n, n, ErrNoMPI)
	}
	return Local(), nil
}
