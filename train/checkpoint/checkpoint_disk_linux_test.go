//go:build linux

package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vit-train/vit-train/internal/tmpfs"
	"github.com/vit-train/vit-train/model"
	"github.com/vit-train/vit-train/model/vit"
)

// checkOnlyCheckpoint asserts that dir holds path alone and that it still
// loads with the wanted state.
func checkOnlyCheckpoint(t *testing.T, dir, path string, want State) {
	t.Helper()
	ck, err := Load(path)
	if err != nil {
		t.Fatalf("the previous checkpoint does not load: %v", err)
	}
	if ck.State != want {
		t.Fatalf("the previous checkpoint has state %+v, want %+v", ck.State, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != filepath.Base(path) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("folder holds %q, want only %s", names, filepath.Base(path))
	}
}

// A checkpoint that does not fit on the disk is an error naming the file
// and ENOSPC; the previous checkpoint stays whole and loadable, and no
// temporary file is left to fill the disk.
func TestCheckpointFullDisk(t *testing.T) {
	dir := tmpfs.Mount(t, "64k")
	path, small := saveTiny(t, dir)

	big := tinyCheckpoint(t)
	wide := tinyViT
	wide.EmbedDim, wide.MLPDim = 64, 128
	m, err := vit.New(wide, 0)
	if err != nil {
		t.Fatal(err)
	}
	big.Spec, big.Params, big.EMA = model.SpecOf(wide), m.Tensors(), nil
	big.State.Epoch++
	err = big.Save(path)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), path) {
		t.Fatalf("saving %d parameters on a 64 kB disk: %v, want ENOSPC naming %s", wide.ParamCount(), err, path)
	}
	t.Logf("full disk: %v", err)
	checkOnlyCheckpoint(t, dir, path, small.State)

	// The space was given back: the next small save succeeds.
	small.State.Step++
	if err := small.Save(path); err != nil {
		t.Fatalf("a save that fits after the failure: %v", err)
	}
	checkOnlyCheckpoint(t, dir, path, small.State)
}

// A read-only folder: the save fails naming the file, the checkpoint stays.
func TestCheckpointReadOnlyFolder(t *testing.T) {
	dir := tmpfs.Mount(t, "64k")
	path, ck := saveTiny(t, dir)
	tmpfs.RemountReadOnly(t, dir)
	next := *ck
	next.State.Epoch++
	err := next.Save(path)
	if !errors.Is(err, syscall.EROFS) || !strings.Contains(err.Error(), path) {
		t.Fatalf("saving into a read-only folder: %v, want EROFS naming %s", err, path)
	}
	checkOnlyCheckpoint(t, dir, path, ck.State)
}
