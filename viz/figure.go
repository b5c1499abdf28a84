package viz

import (
	"image"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Panel is one titled picture of a figure.
type Panel struct {
	Title string
	Image image.Image
}

// Figure layout: the title band of a figure and of each panel, and the
// margin around panels.
const (
	figureTitleHeight = 0.35 * vg.Inch
	panelTitleHeight  = 0.25 * vg.Inch
	panelMargin       = 0.06 * vg.Inch
)

// FigureSize returns the size of a figure of rows × cols panels whose
// pictures are cell × cell: cols·(cell+2·margin) wide and
// title + rows·(cell + panel title + 2·margin) high.
func FigureSize(rows, cols int, cell vg.Length) (w, h vg.Length) {
	w = vg.Length(cols) * (cell + 2*panelMargin)
	h = figureTitleHeight + vg.Length(rows)*(cell+panelTitleHeight+2*panelMargin)
	return w, h
}

// SaveFigure writes panels to path as a PNG: a title over rows of titled
// square cells (cell × cell) left-aligned, cols wide (the longest row), or
// as wide as the title when it is wider. Each
// picture is scaled to fill its cell; square pictures keep their aspect.
func SaveFigure(path, title string, rows [][]Panel, cell vg.Length) error {
	cols := 1
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	w, h := FigureSize(len(rows), cols, cell)
	titleStyle := textStyle(12)
	panelStyle := textStyle(9)
	w = max(w, titleStyle.Width(title)+4*panelMargin) // a title wider than the panels widens the figure
	return savePNG(path, w, h, func(dc draw.Canvas) {
		top := dc.Max.Y
		dc.FillText(titleStyle, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: top - figureTitleHeight/2}, title)
		top -= figureTitleHeight
		rowH := cell + panelTitleHeight + 2*panelMargin
		for i, row := range rows {
			y0 := top - vg.Length(i+1)*rowH + panelMargin // bottom of the pictures of row i
			for j, p := range row {
				x0 := dc.Min.X + vg.Length(j)*(cell+2*panelMargin) + panelMargin
				dc.FillText(panelStyle, vg.Point{X: x0 + cell/2, Y: y0 + cell + panelTitleHeight/2}, p.Title)
				dc.DrawImage(vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x0 + cell, Y: y0 + cell}}, p.Image)
			}
		}
	})
}

// textStyle is centred black text of the plot's default font at size points.
func textStyle(size vg.Length) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, size),
		XAlign:  draw.XCenter,
		YAlign:  draw.YCenter,
		Handler: plot.DefaultTextHandler,
	}
}
