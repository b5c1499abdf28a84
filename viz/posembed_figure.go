package viz

import (
	"fmt"
	"image"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Size of the position-embedding picture, 6.5 × 5.5 inches (624 × 528
// pixels at DPI), of which colorBarWidth on the right holds the colour bar.
const (
	PosEmbedWidth  = 6.5 * vg.Inch
	PosEmbedHeight = 5.5 * vg.Inch
	colorBarWidth  = 1.1 * vg.Inch
	// posEmbedPixels is about the data area's size in pixels; the grid
	// picture is made close to it so that drawing hardly rescales it.
	posEmbedPixels = 440
)

// SimilarityGrid draws a (P, P) similarity matrix of a grid × grid patch
// layout (P = grid²) as ViT's figure 7: a grid × grid arrangement of tiles,
// the tile of patch (r, c) being the grid × grid map of that patch's
// similarity with every patch, coloured from −1 (blue) to 1 (red). Each
// value is a cell × cell block of pixels and tiles are cell pixels apart
// (white), so the picture is grid·(grid+1)·cell pixels square; tile (r, c)
// starts at pixel (c·(grid+1)·cell + cell/2, r·(grid+1)·cell + cell/2).
func SimilarityGrid(sim []float64, grid, cell int) (*image.RGBA, error) {
	p := grid * grid
	if grid < 1 || cell < 1 || len(sim) != p*p {
		return nil, fmt.Errorf("viz: similarity matrix of %d values for a %d×%d grid (want %d)", len(sim), grid, grid, p*p)
	}
	colors := newLUT(similarityColors(), -1, 1)
	block := (grid + 1) * cell
	size := grid * block
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for i := 0; i < p; i++ {
		x0, y0 := (i%grid)*block+cell/2, (i/grid)*block+cell/2
		for j, v := range sim[i*p : (i+1)*p] {
			c := colors.at(v)
			x1, y1 := x0+(j%grid)*cell, y0+(j/grid)*cell
			for y := y1; y < y1+cell; y++ {
				for x := x1; x < x1+cell; x++ {
					img.SetRGBA(x, y, c)
				}
			}
		}
	}
	return img, nil
}

// SavePosEmbedFigure writes the similarity matrix (P, P) of a grid × grid
// patch layout (see PosEmbedSimilarity) to path as a PosEmbedWidth ×
// PosEmbedHeight PNG: SimilarityGrid with patch rows and columns numbered
// from 1 and a colour bar.
func SavePosEmbedFigure(path, title string, sim []float64, grid int) error {
	cell := max(1, posEmbedPixels/(grid*(grid+1)))
	img, err := SimilarityGrid(sim, grid, cell)
	if err != nil {
		return err
	}
	g := float64(grid)
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = "input patch column"
	p.Y.Label.Text = "input patch row"
	p.Add(plotter.NewImage(img, 0, 0, g, g))
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, g, 0, g
	every := max(1, grid/8) // at most about eight labels per axis
	var xt, yt plot.ConstantTicks
	for i := 0; i < grid; i++ {
		label := ""
		if i%every == 0 {
			label = strconv.Itoa(i + 1)
		}
		xt = append(xt, plot.Tick{Value: float64(i) + 0.5, Label: label})
		yt = append(yt, plot.Tick{Value: g - float64(i) - 0.5, Label: label}) // row 1 at the top
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = xt, yt

	bar := plot.New()
	bar.HideX()
	bar.Y.Label.Text = "cosine similarity"
	bar.Add(&plotter.ColorBar{ColorMap: similarityColors(), Vertical: true})

	return savePNG(path, PosEmbedWidth, PosEmbedHeight, func(dc draw.Canvas) {
		dc = draw.Crop(dc, chartMargin, -chartMargin, chartMargin, -chartMargin)
		main := draw.Crop(dc, 0, -colorBarWidth, 0, 0)
		// Make the grid's data area square by trimming the longer side.
		if d := p.DataCanvas(main); d.Size().X > d.Size().Y {
			main = draw.Crop(main, 0, -(d.Size().X - d.Size().Y), 0, 0)
		} else {
			main = draw.Crop(main, 0, 0, 0, -(d.Size().Y - d.Size().X))
		}
		p.Draw(main)
		data := p.DataCanvas(main)
		// The bar spans the grid's height: shift its canvas by the
		// difference between its data area and the grid's.
		side := draw.Crop(dc, dc.Size().X-colorBarWidth, 0, 0, 0)
		side.Min.Y, side.Max.Y = data.Min.Y, data.Max.Y
		b := bar.DataCanvas(side)
		side.Min.Y -= b.Min.Y - data.Min.Y
		side.Max.Y -= b.Max.Y - data.Max.Y
		side.Max.X -= 0.25 * vg.Inch
		bar.Draw(side)
	})
}
