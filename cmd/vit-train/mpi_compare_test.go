package main

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vit-train/vit-train/formats/safetensors"

	"github.com/vit-train/vit-train/formats/metrics"
	"github.com/vit-train/vit-train/train"
)

// TestCompareRunFolders is a helper of scripts/test_mpi.sh: with
// VT_COMPARE=DIR_A:DIR_B it fails unless the last checkpoints of the two run
// folders hold the same position and every parameter tensor within 1e-5
// relative (‖a − b‖ / ‖b‖), every logged step's loss terms within 1e-5
// relative, and the same evaluation top-1 in their epochs logs. VT_COMPARE_TOL sets another tolerance; 0 asks for bit-identical
// parameters and optimiser state. Without VT_COMPARE it is skipped.
func TestCompareRunFolders(t *testing.T) {
	spec := os.Getenv("VT_COMPARE")
	if spec == "" {
		t.Skip("VT_COMPARE=DIR_A:DIR_B not set")
	}
	a, b, ok := strings.Cut(spec, ":")
	if !ok {
		t.Fatalf("VT_COMPARE=%q, want DIR_A:DIR_B", spec)
	}
	ca, err := train.LoadCheckpoint(filepath.Join(a, train.LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	cb, err := train.LoadCheckpoint(filepath.Join(b, train.LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if ca.State.Epoch != cb.State.Epoch || ca.State.Step != cb.State.Step {
		t.Fatalf("positions differ: %+v and %+v", ca.State, cb.State)
	}
	tol := 1e-5
	if s := os.Getenv("VT_COMPARE_TOL"); s != "" {
		if tol, err = strconv.ParseFloat(s, 64); err != nil || tol < 0 {
			t.Fatalf("VT_COMPARE_TOL=%q, want a number >= 0", s)
		}
	}
	other := map[string][]float32{}
	for _, p := range cb.Params {
		other[p.Name] = p.Data
	}
	for _, p := range cb.Optim {
		other[p.Name] = p.Data
	}
	compared := ca.Params
	if tol == 0 {
		for _, p := range ca.Optim {
			compared = append(compared, safetensors.Tensor{Name: p.Name, Shape: p.Shape, Data: p.Data})
		}
	}
	worst, name := 0.0, ""
	for _, p := range compared {
		q, ok := other[p.Name]
		if !ok || len(q) != len(p.Data) {
			t.Fatalf("tensor %s is missing from %s or of another size", p.Name, b)
		}
		var d, n float64
		for i, v := range p.Data {
			x := float64(v) - float64(q[i])
			d += x * x
			n += float64(q[i]) * float64(q[i])
		}
		r := math.Sqrt(d / math.Max(n, 1e-30))
		if r > worst || math.IsNaN(r) {
			worst, name = r, p.Name
		}
	}
	if !(worst <= tol) {
		t.Fatalf("tensor %s differs by %.3g relative, want <= %g", name, worst, tol)
	}
	sa, err := metrics.Read(a, "steps")
	if err != nil {
		t.Fatal(err)
	}
	sb, err := metrics.Read(b, "steps")
	if err != nil {
		t.Fatal(err)
	}
	if len(sa) != len(sb) || len(sa) == 0 {
		t.Fatalf("steps logs hold %d and %d records", len(sa), len(sb))
	}
	for i := range sa {
		for k, v := range sb[i] {
			if !strings.HasPrefix(k, "loss") {
				continue
			}
			if d := math.Abs(sa[i][k] - v); !(d <= tol*math.Abs(v)) {
				t.Fatalf("step %v: %s %v and %v differ by more than %g relative", sb[i]["step"], k, sa[i][k], v, tol)
			}
		}
	}
	ea, err := metrics.Read(a, "epochs")
	if err != nil {
		t.Fatal(err)
	}
	eb, err := metrics.Read(b, "epochs")
	if err != nil {
		t.Fatal(err)
	}
	if len(ea) != len(eb) || len(ea) == 0 || ea[len(ea)-1]["val_top1"] != eb[len(eb)-1]["val_top1"] {
		t.Fatalf("epochs logs differ: %v and %v", ea, eb)
	}
	t.Logf("%d tensors agree within %.3g relative (worst %s); top-1 %v", len(compared), worst, name, ea[len(ea)-1]["val_top1"])
}

// TestCheckpointLoads is a helper of scripts/test_mpi.sh: with
// VT_CHECKPOINT=FILE it fails unless FILE loads as a checkpoint (whole, its
// tensor checksums verified) and prints its position. Without VT_CHECKPOINT
// it is skipped.
func TestCheckpointLoads(t *testing.T) {
	path := os.Getenv("VT_CHECKPOINT")
	if path == "" {
		t.Skip("VT_CHECKPOINT=FILE not set")
	}
	ck, err := train.LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: epoch %d, batch %d, step %d, %d tensors", path, ck.State.Epoch, ck.State.Batch, ck.State.Step, len(ck.Params))
}
