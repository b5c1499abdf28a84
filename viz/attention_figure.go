package viz

import (
	"fmt"
	"image"

	"gonum.org/v1/plot/vg"

	"github.com/vit-train/vit-train/augment"
)

// Attention figure layout: pictures of AttentionCell inches, at most
// maxHeadColumns head maps per row, heat maps blended at overlayAlpha.
const (
	AttentionCell  = 1.6 * vg.Inch
	maxHeadColumns = 6
	overlayAlpha   = 0.5
)

// AttentionFigure describes the attention picture of one image.
type AttentionFigure struct {
	Title  string
	Image  augment.Image // the input as the model saw it, before normalisation: (1 or 3, H, W) in [0, 1]
	Att    *Attention
	Method Method
}

// prefixNames are the prefix tokens' names, in token order.
var prefixNames = []string{"[CLS]", "dist"}

// Panels lays the figure out: the image, then each prefix token's map by
// the method over the image; below, the last block's per-head maps from
// [CLS], maxHeadColumns per row. Each map is scaled from its minimum (dark
// blue) to its maximum (dark red).
func (f AttentionFigure) Panels() ([][]Panel, error) {
	base, err := ToRGBA(f.Image)
	if err != nil {
		return nil, err
	}
	a := f.Att
	if a.Prefix > len(prefixNames) {
		return nil, fmt.Errorf("viz: %d prefix tokens, at most %d known", a.Prefix, len(prefixNames))
	}
	// Pictures are enlarged by an integer factor towards about AttentionCell
	// at DPI, so that the final scaling to the cell hardly blurs them.
	factor := max(1, int(AttentionCell.Dots(DPI))/max(f.Image.H, f.Image.W))
	overlay := func(m []float64) (image.Image, error) {
		heat, err := UpsampleMap(m, a.Grid, a.Grid, f.Image.H, f.Image.W)
		if err != nil {
			return nil, err
		}
		o, err := Overlay(base, heat, overlayAlpha)
		if err != nil {
			return nil, err
		}
		return scaleNearest(o, factor), nil
	}
	top := []Panel{{Title: "input", Image: scaleNearest(base, factor)}}
	for t := 0; t < a.Prefix; t++ {
		m, err := a.Map(f.Method, t)
		if err != nil {
			return nil, err
		}
		img, err := overlay(m)
		if err != nil {
			return nil, err
		}
		top = append(top, Panel{Title: fmt.Sprintf("%s %s", prefixNames[t], f.Method), Image: img})
	}
	rows := [][]Panel{top}
	heads, err := a.HeadMaps(0)
	if err != nil {
		return nil, err
	}
	var row []Panel
	for h, m := range heads {
		img, err := overlay(m)
		if err != nil {
			return nil, err
		}
		row = append(row, Panel{Title: fmt.Sprintf("last block, head %d", h+1), Image: img})
		if len(row) == maxHeadColumns || h == len(heads)-1 {
			rows = append(rows, row)
			row = nil
		}
	}
	return rows, nil
}

// Save writes the figure to path as a PNG (see SaveFigure and FigureSize
// for its size).
func (f AttentionFigure) Save(path string) error {
	rows, err := f.Panels()
	if err != nil {
		return err
	}
	return SaveFigure(path, f.Title, rows, AttentionCell)
}
