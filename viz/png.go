package viz

import (
	"bytes"
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/vit-train/vit-train/formats/atomicfile"
)

// DPI is the resolution of every PNG this package writes: a picture of
// w × h inches is w·DPI × h·DPI pixels.
const DPI = 96

// savePNG draws a w × h picture with paint on a white canvas and writes it
// to path as a PNG, atomically (see atomicfile.Write), so that a picture
// rewritten during training is never seen half written and a failed write
// leaves the previous picture. A panic inside gonum/plot's drawing is returned as an error.
func savePNG(path string, w, h vg.Length, paint func(dc draw.Canvas)) (err error) {
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI), vgimg.UseBackgroundColor(color.White))
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("viz: drawing %s: %v", path, r)
			}
		}()
		paint(draw.New(c))
	}()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return fmt.Errorf("viz: encoding %s: %w", path, err)
	}
	if err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	}); err != nil {
		return fmt.Errorf("viz: %w", err) // names path
	}
	return nil
}
