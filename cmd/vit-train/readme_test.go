package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeBlock returns the lines of the first ```sh block after heading in
// the README.
func readmeBlock(t *testing.T, heading string) []string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README has no heading %q", heading)
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	if !ok {
		t.Fatalf("README's %q has no sh block", heading)
	}
	block, _, _ := strings.Cut(rest, "```")
	return strings.Split(strings.TrimSpace(block), "\n")
}

// writePhotos writes photos/{train,val}/{cat,dog,fox}/N.jpg under dir:
// per training and 2 validation JPEGs of 40×30 pixels per class.
func writePhotos(t *testing.T, dir string, per int) {
	t.Helper()
	for s, split := range []string{"train", "val"} {
		for c, class := range []string{"cat", "dog", "fox"} {
			folder := filepath.Join(dir, "photos", split, class)
			if err := os.MkdirAll(folder, 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range []int{per, 2}[s] {
				img := image.NewRGBA(image.Rect(0, 0, 40, 30))
				for y := range 30 {
					for x := range 40 {
						img.Set(x, y, color.RGBA{uint8(100 * c), uint8(6*x + i), uint8(8 * y), 255})
					}
				}
				var b bytes.Buffer
				if err := jpeg.Encode(&b, img, nil); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(folder, fmt.Sprintf("%d.jpg", i+1)), b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestReadmeImageFolderCommands runs the README's commands for one's own
// images, in order, as written, on a generated folder of a few images,
// with settings added only to make them quick: a one-block model, one
// epoch, small batches.
func TestReadmeImageFolderCommands(t *testing.T) {
	lines := readmeBlock(t, "## Your own images")
	dir := t.TempDir()
	t.Chdir(dir)
	writePhotos(t, dir, 4)
	quick := map[string][]string{
		"train": {"--set", "epochs=1", "--set", "data.batch_size=4", "--set", "data.eval_batch_size=4", "--set", "progress=false",
			"--set", "model.embed_dim=16", "--set", "model.depth=1", "--set", "model.num_heads=2"},
		"finetune": {"--set", "data.batch_size=4", "--set", "data.eval_batch_size=4", "--set", "progress=false"},
	}
	ran := 0
	for _, line := range lines {
		args := strings.Fields(line)
		if len(args) == 0 || args[0] == "go" {
			continue
		}
		if args[0] != "./vit-train" {
			t.Fatalf("README line %q: want go build or ./vit-train", line)
		}
		args = append(args[1:], quick[args[1]]...)
		out, err := run(t, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		t.Logf("%s\n%s", line, out)
		ran++
	}
	if ran < 5 {
		t.Fatalf("ran %d commands of the README's section", ran)
	}
	for _, f := range []string{"runs/photos/best.safetensors", "runs/vit_cifar_patch4_32_finetune_64px/best.safetensors", "photos.onnx", "photos.safetensors"} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("the README's commands wrote no %s", f)
		}
	}
}
