//go:build !mpi

package comm

import (
	"errors"
	"strings"
	"testing"
)

func TestFromEnvWithoutMPI(t *testing.T) {
	cases := []struct {
		ompi, pmi string
		wantErr   string // "" for Local
	}{
		{"", "", ""},
		{"1", "", ""},
		{"", "1", ""},
		{"2", "", "OMPI_COMM_WORLD_SIZE=2"},
		{"", "8", "PMI_SIZE=8"},
		{"x", "", "not a process count"},
		{"0", "", "not a process count"},
	}
	for _, tc := range cases {
		t.Setenv("OMPI_COMM_WORLD_SIZE", tc.ompi)
		t.Setenv("PMI_SIZE", tc.pmi)
		c, err := FromEnv()
		if tc.wantErr == "" {
			if err != nil || c.Size() != 1 || c.Rank() != 0 {
				t.Errorf("OMPI_COMM_WORLD_SIZE=%q PMI_SIZE=%q: %v, %v; want Local", tc.ompi, tc.pmi, c, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("OMPI_COMM_WORLD_SIZE=%q PMI_SIZE=%q: %v, want an error with %q", tc.ompi, tc.pmi, err, tc.wantErr)
		}
		if strings.Contains(tc.wantErr, "SIZE=") && !errors.Is(err, ErrNoMPI) {
			t.Errorf("OMPI_COMM_WORLD_SIZE=%q PMI_SIZE=%q: %v does not wrap ErrNoMPI", tc.ompi, tc.pmi, err)
		}
	}
}
