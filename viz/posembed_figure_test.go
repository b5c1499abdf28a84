package viz_test

import (
	"image/color"
	"path/filepath"
	"testing"

	"github.com/vit-train/vit-train/viz"
)

// TestSimilarityGrid checks the layout of figure 7: tile (r, c) holds patch
// r·G+c's similarity with every patch, each value a cell × cell block.
func TestSimilarityGrid(t *testing.T) {
	const grid, cell = 2, 3
	// Patch i's similarity with patch j: 1 on the diagonal, −1 elsewhere.
	sim := make([]float64, 16)
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			sim[i*4+j] = -1
			if i == j {
				sim[i*4+j] = 1
			}
		}
	}
	img, err := viz.SimilarityGrid(sim, grid, cell)
	if err != nil {
		t.Fatal(err)
	}
	const block = (grid + 1) * cell // a tile and its gap
	if b := img.Bounds(); b.Dx() != grid*block || b.Dy() != grid*block {
		t.Fatalf("grid picture is %v, want %d square", b, grid*block)
	}
	red := img.RGBAAt(cell/2, cell/2) // tile (0, 0), its own cell (0, 0)
	blue := img.RGBAAt(cell/2+cell, cell/2)
	if !(red.R > red.B && blue.B > blue.R) {
		t.Fatalf("similarity 1 is %v and −1 is %v; want red and blue", red, blue)
	}
	for i := 0; i < 4; i++ {
		r, c := i/grid, i%grid
		for j := 0; j < 4; j++ {
			want := blue
			if i == j {
				want = red
			}
			x0, y0 := c*block+cell/2+(j%grid)*cell, r*block+cell/2+(j/grid)*cell
			for y := y0; y < y0+cell; y++ {
				for x := x0; x < x0+cell; x++ {
					if got := img.RGBAAt(x, y); got != want {
						t.Fatalf("tile (%d, %d), patch %d, pixel (%d, %d) = %v, want %v", r, c, j, x, y, got, want)
					}
				}
			}
		}
	}
	// The gap between tiles is white.
	if got := img.RGBAAt(block-1, 0); got != (color.RGBA{255, 255, 255, 255}) {
		t.Errorf("gap pixel = %v, want white", got)
	}
	if _, err := viz.SimilarityGrid(sim[:15], grid, cell); err == nil {
		t.Error("SimilarityGrid accepted 15 values for a 2×2 grid")
	}
}

func TestSavePosEmbedFigure(t *testing.T) {
	const grid = 3
	rows := make([]float32, grid*grid*4)
	for i := range rows {
		rows[i] = float32(i%7) - 3
	}
	sim, err := viz.CosineSimilarity(rows, grid*grid, 4)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pos.png")
	if err := viz.SavePosEmbedFigure(path, "test", sim, grid); err != nil {
		t.Fatal(err)
	}
	decodePNG(t, path, pixels(6.5), pixels(5.5))
	if err := viz.SavePosEmbedFigure(path, "test", sim, grid+1); err == nil {
		t.Error("SavePosEmbedFigure accepted a 3×3 grid's matrix as 4×4")
	}
}
